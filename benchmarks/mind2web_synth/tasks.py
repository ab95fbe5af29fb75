"""Mind2Web-shaped tasks of themed pages, streamed one at a time into a JSON array file."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .page import Page, Target
from .themes import THEMES, class_names
from .widgets import Theme, Widgets

EMPTY_POSITIVE_RATE = 0.05  # actions whose target is hidden at capture time (no positive)
SHARED_PAGE_RATE = 0.15  # pages two consecutive actions are taken on
WITH_VALUE = ("TYPE", "SELECT")  # operations that carry a value; the others count as CLICK


def build_page(widgets: Widgets, site: str, html_kb: float) -> Page:
    """A page of about `html_kb` KB of raw_html, a fifth of that as cleaned_html (never below
    ~20 KB: header, form, footer, one stylesheet and one script)."""
    rng, budget = widgets.rng, html_kb * 1024
    page = Page(rng, rng.randint(200, 30000))
    html_id, head_id, meta_id, title_id, body_id = (page.new_id() for _ in range(5))
    page.raw.append("")  # the html and body start tags, once the page's height is known
    page.put(
        f'<head backend_node_id="{head_id}"><meta backend_node_id="{meta_id}" charset="utf-8"/>'
        f'<title backend_node_id="{title_id}">{site.title()} | {widgets.theme["subdomain"]}</title>'
    )
    page.add(widgets.style(rng.randint(3000, 8000)), depth=1)
    page.add(widgets.script(rng.randint(4000, 12000)), depth=1)
    page.put("</head>")
    body_at = len(page.raw)
    page.raw.append("")
    page.add(widgets.header(site))
    page.add(widgets.search_form())
    while page.cleaned_size < budget / 5 and page.raw_size < budget * 0.9:
        roll = rng.random()
        page.add(
            widgets.card() if roll < 0.8 else widgets.filters() if roll < 0.9 else widgets.promo()
        )
    page.add(widgets.footer(site))
    for _ in range(rng.randint(1, 3)):
        page.add(widgets.hidden_part())
    while page.raw_size < budget:
        page.add(widgets.script(rng.randint(4000, 12000)))
    page.put("</body></html>")
    box = f'bounding_box_rect="0,0,1280,{page.y:g}"'
    page.raw[0] = f'<html backend_node_id="{html_id}" {box} lang="en">'
    page.raw[body_at] = f'<body backend_node_id="{body_id}" {box} class="{widgets.classes[0]}">'
    page.cleaned[:0] = [
        f'<html backend_node_id="{html_id}">',
        f'  <body backend_node_id="{body_id}">',
    ]
    page.cleaned += ["  </body>", "</html>"]
    return page


def mark_targets(raw: str, marks: list[tuple[int, str]]) -> str:
    """`data_pw_testid_buckeye="<action uid>"` in the start tag of each marked element."""
    cuts = []
    for nid, uid in marks:
        start = raw.index(f' backend_node_id="{nid}"')
        end = raw.index(">", start)
        end -= raw[end - 1] == "/"
        clickable = raw.find(' is_clickable="true"', start, end)
        cuts.append((clickable if clickable >= 0 else end, f' data_pw_testid_buckeye="{uid}"'))
    pieces, last = [], 0
    for at, text in sorted(cuts):
        pieces += [raw[last:at], text]
        last = at
    return "".join([*pieces, raw[last:]])


def pick_targets(page: Page, rng: random.Random, count: int) -> list[Target]:
    """`count` distinct targets: mostly shown ones (clicks, typing, selects), now and then one
    hidden at capture time."""
    shown: dict[str, list[Target]] = {}
    for target in page.targets:
        if target.candidate >= 0:
            shown.setdefault(target.kind, []).append(target)
    hidden = [t for t in page.targets if t.candidate < 0]
    weights = {"click": 6, "type": 3, "select": 2}
    kinds = [k for k in weights if k in shown]
    picks: list[Target] = []
    while len(picks) < count:
        if hidden and rng.random() < EMPTY_POSITIVE_RATE:
            target = rng.choice(hidden)
        else:
            target = rng.choice(shown[rng.choices(kinds, [weights[k] for k in kinds])[0]])
        if target not in picks:
            picks.append(target)
    return picks


def operation(target: Target, rng: random.Random, slots: dict[str, str]) -> tuple[str, str]:
    """What an action on `target` does: (original_op, value)."""
    if target.kind == "type":
        if rng.random() < 0.12:
            return "ENTER", ""
        return "TYPE", slots.get(target.slot or "") or rng.choice(list(slots.values()))
    if target.kind == "select":
        return "SELECT", rng.choice(target.options[1:] or target.options)
    return (
        ("HOVER", "")
        if target.element.startswith("[link]") and rng.random() < 0.08
        else ("CLICK", "")
    )


def action(
    page: Page, raw: str, target: Target, uid: str, op: tuple[str, str], negatives: int
) -> dict[str, Any]:
    """One entry of a task's `actions`: HOVER and ENTER count as CLICK in `operation.op`."""
    rng, own = page.rng, target.candidate
    pool = [i for i in range(len(page.candidates)) if i != own]
    drawn = sorted(rng.sample(pool, min(negatives, len(pool))))
    positives = []
    if own >= 0:
        positives.append(page.candidate(own, is_original_target=True, is_top_level_target=True))
    original, value = op
    return {
        "action_uid": uid, "raw_html": raw, "cleaned_html": "\n".join(page.cleaned),
        "operation": {"op": original if original in WITH_VALUE else "CLICK",
                      "original_op": original, "value": value},
        "pos_candidates": positives, "neg_candidates": [page.candidate(i) for i in drawn],
    }  # fmt: skip


def new_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def make_task(
    theme: Theme, classes: list[str], rng: random.Random, steps: int, html_kb: float, negatives: int
) -> dict[str, Any]:
    """One task of `steps` actions; now and then two consecutive actions share one page."""
    widgets = Widgets(theme, classes, rng)
    site = rng.choice(theme["websites"])
    slots = {name: rng.choice(values) for name, values in theme["slots"].items()}
    actions, reprs = [], []
    while len(actions) < steps:
        shared = steps - len(actions) >= 2 and rng.random() < SHARED_PAGE_RATE
        page = build_page(widgets, site, html_kb)
        targets = pick_targets(page, rng, 2 if shared else 1)
        uids = [new_uid(rng) for _ in targets]
        raw = mark_targets(
            "".join(page.raw), [(t.nid, u) for t, u in zip(targets, uids, strict=True)]
        )
        for target, uid in zip(targets, uids, strict=True):
            op = operation(target, rng, slots)
            actions.append(action(page, raw, target, uid, op, negatives))
            reprs.append(
                f"{target.element} -> {op[0]}" + (f": {op[1]}" if op[0] in WITH_VALUE else "")
            )
    instruction = rng.choice(theme["task"]).format(**slots)
    return {
        "annotation_id": new_uid(rng), "website": site, "domain": theme["domain"],
        "subdomain": theme["subdomain"], "confirmed_task": instruction, "action_reprs": reprs,
        "actions": actions,
    }  # fmt: skip


def iter_tasks(
    n_tasks: int, steps_per_task: int, html_kb: float, seed: int, negatives: int = 50
) -> Iterator[dict[str, Any]]:
    """Mind2Web-shaped tasks, one at a time; the same arguments give the same tasks.

    Args:
        html_kb: about the size of each raw_html page, in KB.
        negatives: negative candidates per action (fewer if the page has fewer elements).
    """
    rng = random.Random(seed)
    classes = {i: class_names(random.Random(seed * 1009 + i)) for i in range(len(THEMES))}
    for _ in range(n_tasks):
        index = rng.randrange(len(THEMES))
        yield make_task(THEMES[index], classes[index], rng, steps_per_task, html_kb, negatives)


def write_tasks(
    path: Path | str,
    n_tasks: int,
    steps_per_task: int,
    html_kb: float,
    seed: int,
    negatives: int = 50,
) -> int:
    """Stream a JSON array of tasks to `path`, one task per line; returns the bytes written."""
    with open(path, "wb") as handle:
        handle.write(b"[\n")
        for i, task in enumerate(iter_tasks(n_tasks, steps_per_task, html_kb, seed, negatives)):
            handle.write((b",\n" if i else b"") + orjson.dumps(task))
        handle.write(b"\n]\n")
        return handle.tell()
