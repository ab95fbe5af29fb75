"""The benchmark steps of a standardized episode: page, target, operation, earlier actions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

# How the spine writes an operation's value into an api_action's kwargs, per function.
OPERATIONS = {"click": "CLICK", "type": "TYPE", "select_option": "SELECT"}


@dataclass
class Step:
    """One action of an episode with what the benchmark needs to pose it."""

    step: int
    action_uid: str | None
    html_sha: str | None
    image_sha: str | None
    """The screenshot of the page the action was taken on (in `images`), if it has one."""
    op: str
    value: str
    targets: list[str]
    previous_actions: list[str]
    negatives: list[str] = field(default_factory=list)


def _json(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    value = orjson.loads(text)
    return value if isinstance(value, dict) else {}


def describe(extra: dict[str, Any]) -> str:
    """An earlier action as a line of the prompt: the source's own wording when it has one."""
    if extra.get("action_repr"):
        return str(extra["action_repr"])
    operation = extra.get("op") or ""
    return f"-> {operation}: {extra['value']}" if extra.get("value") else f"-> {operation}"


def _history(details: dict[str, Any], extras: list[dict[str, Any]], step: int) -> list[str]:
    """What was done before `step`: Mind2Web's action_reprs, else the step rows' own
    previous_actions, completed from the episode's earlier actions where those fall short."""
    known = details.get("action_reprs") or details.get("previous_actions") or []
    known = [str(line) for line in known if line is not None][:step]
    by_step = {extra.get("step"): extra for extra in extras}
    for earlier in range(len(known), step):
        known.append(describe(by_step.get(earlier, {})))
    return known


def benchmark_steps(
    episode: dict[str, Any], events: list[dict[str, Any]], candidates: list[dict[str, Any]]
) -> Iterator[Step]:
    """Every action that names its operation (`extra.op`), with its page and targets.

    Args:
        events: the episode's events in order.
        candidates: its `web_candidates` rows; positives are targets, the rest negatives.
    """
    details = _json(episode.get("details"))
    page: str | None = None
    shot: str | None = None
    actions: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for event in events:
        if event["kind"] == "web_observation":
            page, shot = event.get("html_sha"), event.get("image_sha")
        elif event["kind"] == "api_action":
            extra = _json(event.get("extra"))
            if "op" in extra:
                extra["html_sha"], extra["image_sha"] = page, shot
                actions.append((event, extra))
            page = shot = None
    by_step: dict[int, list[dict[str, Any]]] = {}
    for candidate in candidates:
        by_step.setdefault(candidate["step"], []).append(candidate)
    extras = [extra for _, extra in actions]
    for event, extra in actions:
        number = int(extra.get("step", 0))
        rows = by_step.get(number, [])
        positives = sorted(
            (c for c in rows if c["positive"]), key=lambda c: not c.get("is_original_target")
        )
        targets = [c["backend_node_id"] for c in positives]
        bid = _json(event.get("kwargs")).get("bid")
        if bid is not None and str(bid) not in targets:
            targets.append(str(bid))
        yield Step(
            step=number,
            action_uid=extra.get("action_uid"),
            html_sha=extra["html_sha"],
            image_sha=extra["image_sha"],
            op=extra["op"],
            value=extra.get("value") or "",
            targets=targets,
            previous_actions=_history(details, extras, number),
            negatives=[c["backend_node_id"] for c in rows if not c["positive"]],
        )
