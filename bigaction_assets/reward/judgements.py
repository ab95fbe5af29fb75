"""Judged proposals from both places people's verdicts come from: the annotated reward data
standardized by the proactive source, and turns labelled in the annotation app."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from bigaction_assets.reward.rules import Judgement, Observation, TurnLabel, judge_turn

PROPOSE = "propose_tasks"


def _extra(event: Mapping[str, Any]) -> dict[str, Any]:
    return orjson.loads(event.get("extra") or "{}")


def observations_of(events: Iterable[Mapping[str, Any]]) -> list[Observation]:
    """The text observations of events, in order, with the time each carries in `extra`."""
    return [
        Observation(str(_extra(e).get("time", "")), str(e.get("content") or ""))
        for e in events
        if e["kind"] == "text_observation"
    ]


def proposed_tasks(event: Mapping[str, Any]) -> list[str]:
    return list(orjson.loads(event.get("kwargs") or "{}").get("tasks") or [])


def reward_episode_judgement(
    episode: Mapping[str, Any], events: Sequence[Mapping[str, Any]]
) -> Judgement | None:
    """The judgement an annotated reward episode holds (None for any other episode), in the
    split of the file it came from.

    Its id is `<episode id>#0`: the episode holds exactly one judged proposal.
    """
    details = orjson.loads(episode.get("details") or "{}")
    verdict = details.get("judgement")
    if details.get("kind") != "reward" or not isinstance(verdict, dict):
        return None
    ordered = sorted(events, key=lambda e: e["idx"])
    proposal = next(e for e in reversed(ordered) if e.get("function") == PROPOSE)
    tasks = proposed_tasks(proposal)
    return Judgement(
        example_id=f"{episode['episode_id']}#0",
        episode_id=str(episode["episode_id"]),
        observations=tuple(observations_of(ordered)),
        task=tasks[0] if tasks else None,
        valid=bool(verdict["valid"]),
        help_needed=bool(verdict["help_needed"]),
        votes=tuple(bool(v) for v in verdict["annotation"]),
        origin="bundled",
        split=episode.get("source_split"),
    )


def turn_label(label: Mapping[str, Any]) -> TurnLabel:
    """An `annotations` row of a proactive turn as the rules read it."""
    return TurnLabel(frozenset(label.get("accepted_tasks") or ()), label.get("help_needed"))


def app_judgements(
    items: Mapping[str, Mapping[str, Any]], labels: Iterable[Mapping[str, Any]]
) -> tuple[list[Judgement], dict[str, int]]:
    """Judgements from the app's labels on proactive turns, with counts of what gave none.

    Args:
        items: `annotation_items` payloads by item id (`observations`, `candidate_tasks`).
        labels: `annotations` rows of kind `proactive_turn`.
    """
    by_item: dict[str, list[Mapping[str, Any]]] = {}
    for label in labels:
        by_item.setdefault(label["item_id"], []).append(label)
    found: list[Judgement] = []
    skipped = {"turns_with_one_label": 0, "tasks_undecided": 0, "items_unknown": 0}
    for item_id in sorted(by_item):
        own = sorted(by_item[item_id], key=lambda row: row["annotator_id"])
        payload = items.get(item_id)
        if payload is None:
            skipped["items_unknown"] += 1
            continue
        observations = [Observation(o["time"], o["event"]) for o in payload["observations"]]
        judged, undecided = judge_turn(
            item_id, own[0]["episode_id"], observations, payload["candidate_tasks"],
            [turn_label(row) for row in own],
        )  # fmt: skip
        if not judged:
            skipped["turns_with_one_label"] += 1
        skipped["tasks_undecided"] += undecided
        found.extend(judged)
    return found, skipped
