"""Whether landed telemetry lines can be stored, asked of the code and contracts ingestion
itself uses: the `raw_telemetry` row each line makes, and the episode, events and pages its run
makes, every value checked against its column. The collector asks before it answers 202, the
telemetry adapter before it hands rows to the lake, so the two cannot disagree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bigaction_assets.schemas.standardized import DomSnapshotSchema, EpisodeSchema, EventSchema
from bigaction_assets.schemas.telemetry import RawTelemetrySchema
from bigaction_assets.schemas.values import row_problem
from bigaction_assets.sources.base import RecordRejected
from bigaction_assets.telemetry.episodes import run_episode
from bigaction_assets.telemetry.raw import NotAnEnvelope, raw_row
from bigaction_assets.telemetry_batches import batch_day


@dataclass(frozen=True)
class Unstorable:
    """Why one landed line cannot be stored: a reason code and what was wrong, for a person."""

    reason: str
    detail: str


def episode_problem(episode: dict[str, Any]) -> str | None:
    """The first value of a built episode (task, details, events, pages) its table refuses."""
    problem = row_problem(EpisodeSchema, {"task": episode["task"], "details": episode["details"]})
    for event in episode["events"]:
        problem = problem or row_problem(EventSchema, event)
    for page in episode["pages"]:
        problem = problem or row_problem(DomSnapshotSchema, page)
    return problem


def build_episode(
    day: str, run: str, envelopes: list[dict[str, Any]], renumbered: bool = True
) -> tuple[dict[str, Any] | None, Unstorable | None]:
    """The run's episode as ingestion builds it, or why it cannot be stored."""
    try:
        episode = run_episode(day, run, envelopes, renumbered)
        problem = episode_problem(episode)
    except RecordRejected as exc:
        return None, Unstorable(exc.reason, exc.detail)
    except Exception as exc:  # built by our code from a sender's values: any bug is theirs to
        # suffer alone, named by type only (a message could hold their value)
        return None, Unstorable("unreadable", f"{type(exc).__name__} while building the episode")
    return (None, Unstorable("unstorable", problem)) if problem else (episode, None)


def _episode_failure(day: str, run: str, envelopes: list[dict[str, Any]]) -> Unstorable | None:
    # renumbering placeholders rewrites text inside strings, never a type or a number
    return build_episode(day, run, envelopes, renumbered=False)[1]


def line_failure(envelope: Any) -> Unstorable | None:
    """Why this one landed line cannot be stored on its own, or None when it can."""
    if not isinstance(envelope, dict) or not isinstance(envelope.get("run"), str):
        return Unstorable("not_an_envelope", "a landed line is an object with a `run`")
    try:
        row = raw_row(str(envelope.get("batch_id")), 1, envelope)
        day = row["day"]
    except NotAnEnvelope as exc:
        return Unstorable("not_an_envelope", str(exc))
    problem = row_problem(RawTelemetrySchema, row)
    if problem is not None:
        return Unstorable("unstorable", problem)
    return _episode_failure(day, envelope["run"], [envelope])


def run_failures(day: str, run: str, envelopes: list[dict[str, Any]]) -> dict[int, Unstorable]:
    """The lines of one run that cannot be stored, by position. Lines are looked at one by one
    only when the run as a whole cannot be stored, so the common case costs one build; when no
    line fails alone but the run does, every line carries the run's reason."""
    raw = any(_raw_problem(envelope) for envelope in envelopes)
    whole = None if raw else _episode_failure(day, run, envelopes)
    if not raw and whole is None:
        return {}
    alone = {i: f for i, e in enumerate(envelopes) if (f := line_failure(e)) is not None}
    if alone:
        return alone
    whole = whole or _episode_failure(day, run, envelopes)
    return dict.fromkeys(range(len(envelopes)), whole) if whole else {}


def _raw_problem(envelope: dict[str, Any]) -> str | None:
    try:
        return row_problem(RawTelemetrySchema, raw_row(str(envelope.get("batch_id")), 1, envelope))
    except NotAnEnvelope as exc:
        return str(exc)


def batch_failure(batch_id: str, envelopes: Iterable[dict[str, Any]]) -> tuple[int, str] | None:
    """(record index, why) of the first record of a batch about to land that ingestion could
    not store, or None when all of it can be."""
    day = batch_day(batch_id)
    runs: dict[str, list[dict[str, Any]]] = {}
    for envelope in envelopes:
        runs.setdefault(envelope["run"], []).append(envelope)
    found = []
    for run, steps in runs.items():
        failures = run_failures(day, run, steps)
        found += [(steps[i]["record_index"], failure.detail) for i, failure in failures.items()]
    return min(found) if found else None
