"""Items to label, from the standardized lake: web-agent steps (episodes with pages) and
proactive-assistant turns (the proactive source's traces).

A web step is a page the agent saw (a `web_observation` with a page in `dom_snapshots`) and the
actions it took before the next observation; its id is `<episode id>#<observation idx>`. Its
page is the cleaned DOM (`dom.clean_page`), rendered as HTML with the action's target element
marked `data-ba-target`. A proactive turn is a `propose_tasks` action with the observations
before it; its id is `<episode id>#<action idx>`. Ids start with the episode id, so erasing an
episode erases its items.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from bigaction_assets.annotate.labels import PROACTIVE_TURN, WEB_STEP
from bigaction_assets.dom.render import render
from bigaction_assets.dom.tree import clean_page
from bigaction_assets.episodes.reader import iter_episodes, standardized_datasets
from bigaction_assets.lake import Lake
from bigaction_assets.reward.judgements import PROPOSE, observations_of, proposed_tasks
from bigaction_assets.shard_keys import dataset_of

ACTION_KINDS = ("api_action", "code_action", "message_action")
PAGE_CHARS = 200_000  # what an annotator can take in; the render says where it was cut
ACTION_CHARS = 400


def action_text(event: Mapping[str, Any]) -> str:
    """An action as one readable line: `click(bid="69")`, the code, or `say("…")`."""
    if event["kind"] == "code_action":
        text = str(event.get("content") or "")
    elif event["kind"] == "message_action":
        text = f"say({orjson.dumps(event.get('content') or '').decode()})"
    else:
        kwargs = orjson.loads(event.get("kwargs") or "{}")
        if not isinstance(kwargs, dict):
            kwargs = {"arguments": kwargs}
        arguments = ", ".join(f"{k}={orjson.dumps(v).decode()}" for k, v in kwargs.items())
        text = f"{event.get('function')}({arguments})"
    return text if len(text) <= ACTION_CHARS else text[: ACTION_CHARS - 1] + "…"


def _extra(event: Mapping[str, Any]) -> dict[str, Any]:
    value = orjson.loads(event.get("extra") or "{}")
    return value if isinstance(value, dict) else {}


def _targets(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    found = []
    for action in actions:
        kwargs = orjson.loads(action.get("kwargs") or "{}")
        if isinstance(kwargs, dict) and isinstance(kwargs.get("bid"), str | int):
            found.append(str(kwargs["bid"]))
    return found


def page_view(html: str, targets: Sequence[str]) -> str:
    """The cleaned page as HTML for the sandboxed frame, the targets marked."""
    text = render(clean_page(html, keep=targets), max_chars=PAGE_CHARS)
    for bnid in targets:
        text = re.sub(rf"(<[a-z0-9]+ bnid={re.escape(bnid)})(?=[ />])", r"\1 data-ba-target", text)
    return text


def _sha(*parts: Any) -> str:
    return hashlib.sha256(orjson.dumps(parts)).hexdigest()


def web_step_items(
    episode: Mapping[str, Any], events: Sequence[Mapping[str, Any]], pages: Mapping[str, str]
) -> Iterator[dict[str, Any]]:
    previous: list[str] = []
    for at, event in enumerate(events):
        if event["kind"] != "web_observation":
            continue
        actions = []
        for later in events[at + 1 :]:
            if later["kind"] == "web_observation":
                break
            if later["kind"] in ACTION_KINDS and later.get("actor") == "agent":
                actions.append(later)
        texts = [action_text(a) for a in actions]
        html = pages.get(event.get("html_sha") or "")
        if html and actions:
            claims = [_extra(a).get("success") for a in actions]
            claim = next((c for c in claims if isinstance(c, bool)), None)
            payload = {
                "task": episode.get("task"), "url": event.get("url"),
                "previous_actions": list(previous), "actions": texts, "success_claim": claim,
                "html_sha": event["html_sha"], "targets": _targets(actions),
            }  # fmt: skip
            yield _item(
                episode, event["idx"], WEB_STEP, payload, page_view(html, _targets(actions))
            )
        previous += texts


def proactive_turn_items(
    episode: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
) -> Iterator[dict[str, Any]]:
    if orjson.loads(episode.get("details") or "{}").get("kind") != "trace":
        return
    for at, event in enumerate(events):
        if event.get("function") == PROPOSE:
            observations = [
                {"time": o.time, "event": o.event} for o in observations_of(events[:at])
            ]
            payload = {"observations": observations, "candidate_tasks": proposed_tasks(event),
                       "theme": episode.get("domain")}  # fmt: skip
            yield _item(episode, event["idx"], PROACTIVE_TURN, payload, None)


def _item(
    episode: Mapping[str, Any], idx: int, kind: str, payload: dict[str, Any], page: str | None
) -> dict[str, Any]:
    text = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode()
    return {
        "item_id": f"{episode['episode_id']}#{idx}", "item_kind": kind,
        "episode_id": episode["episode_id"], "dataset": episode["dataset"], "payload": text,
        "page_html": page, "content_sha": _sha(kind, text, page),
    }  # fmt: skip


def annotation_items(
    lake: Lake, datasets: Sequence[str] | None = None, per_dataset: int | None = None
) -> Iterator[dict[str, Any]]:
    """Every item of the chosen datasets (all by default; a dataset's name takes all its
    shards, a partition key that shard alone), at most `per_dataset` from each dataset, however
    many shards it landed as, in the order of the lake."""
    partitions = standardized_datasets(lake)
    if datasets is not None:
        named = {name for p in partitions for name in (p, dataset_of(p))}
        unknown = sorted(set(datasets) - named)
        if unknown:
            raise ValueError(
                f"no standardized dataset or partition is named {', '.join(unknown)} "
                f"(there are: {', '.join(sorted(named)) or 'none'})"
            )
        partitions = [p for p in partitions if p in datasets or dataset_of(p) in datasets]
    made: Counter[str] = Counter()
    for partition in partitions:
        dataset = dataset_of(partition)
        if per_dataset is not None and made[dataset] >= per_dataset:
            continue
        for episode, events, pages in iter_episodes(lake, partition):
            for item in (
                *web_step_items(episode, events, pages),
                *proactive_turn_items(episode, events),
            ):
                if per_dataset is not None and made[dataset] >= per_dataset:
                    break
                made[dataset] += 1
                yield item
            if per_dataset is not None and made[dataset] >= per_dataset:
                break
