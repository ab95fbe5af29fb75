"""Raw records to rows of the standardized tables, with a reject for each record that makes none."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from bigaction_assets.images.events import EventImages
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.schemas.standardized import SCHEMA_VERSION
from bigaction_assets.shard_keys import dataset_of
from bigaction_assets.sources import partition_key
from bigaction_assets.sources.base import (
    ParsedRecord,
    Rejection,
    SourceAdapter,
    StandardRecord,
    Tally,
)
from bigaction_assets.sources.raw_text import UNPARSED

REJECT_TEXT_CHARS = 4_000
EVENT_COLUMNS = (
    "content", "name", "function", "kwargs", "language", "description", "url", "axtree",
    "html_sha", "viewport_width", "viewport_height", "image_path", "bbox", "extra",
    "image_sha", "answer_image_sha", "image_error",
)  # fmt: skip
# Rows of this name carry an adapter's `Tally` (`name`, `count`) to the stage's metadata.
TALLIES = "tallies"
RECORDED = "recorded"  # events.thought_source of a thought that came with the record


def unreadable_rejects(
    adapter: SourceAdapter, dataset: str, rows: Iterable[dict[str, Any]]
) -> Iterator[Row]:
    """A `rejects` row for each raw record that could not be read at all."""
    for raw in rows:
        yield _reject(adapter, dataset, raw, "read", raw["error"], raw["error_detail"])


@dataclass(frozen=True, slots=True)
class Row:
    """A row for one of the standardized tables."""

    table: str
    values: dict[str, Any]
    records: tuple[tuple[str, int], ...] = ()
    """The raw records (file, record_index) an episode, its pages or a reject came from: what
    the raw step's pass needs to know which records a page may be cut out of, and which are
    done."""


def repeated_ids(record_ids: Iterable[str | None]) -> set[str]:
    """Record ids that more than one record of a dataset carries."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for record_id in record_ids:
        if record_id is not None:
            (repeated if record_id in seen else seen).add(record_id)
    return repeated


def standardize(
    adapter: SourceAdapter,
    dataset: str,
    raw_rows: Iterable[dict[str, Any]],
    ambiguous_ids: set[str] = frozenset(),
    images: ImageResolver | None = None,
) -> Iterator[Row]:
    """Raw records of one dataset as rows of episodes, events, dom_snapshots, web_candidates,
    images and rejects, and `TALLIES` rows of what the adapter counted and of what became of
    each image an event points at. Every raw record ends up in
    exactly one episode or one reject, except an ADP thought cache, whose thoughts join the
    actions they are keyed to (and whose mismatches are rejects).

    Unreadable rows (with an `error`) are rejected here too, but only once the adapter asks for
    the next readable one; a caller streaming a large partition hands them to
    `unreadable_rejects` instead, so they are never held.

    Args:
        ambiguous_ids: source ids that several records share (see `repeated_ids`); their
            episodes are told apart by content hash, so no id depends on record order.
        images: fetches the images events point at (default: none but inline ones can be).
    """
    key = partition_key(adapter.name, dataset)
    read_rejects: list[Row] = []

    def readable() -> Iterator[ParsedRecord]:
        for raw in raw_rows:
            if raw["error"] is not None:
                read_rejects.append(
                    _reject(adapter, dataset, raw, "read", raw["error"], raw["error_detail"])
                )
                continue
            value = raw.get("value", UNPARSED)  # parsed already when read in the same pass
            if value is UNPARSED:
                try:
                    value = orjson.loads(raw["text"])
                except orjson.JSONDecodeError as exc:  # read leniently, but not valid JSON
                    read_rejects.append(
                        _reject(adapter, dataset, raw, "standardize", "malformed_json", str(exc))
                    )
                    continue
            yield ParsedRecord(raw["file"], raw["line"], raw["record_index"], raw["text"], value)

    seen_episodes: set[str] = set()
    seen_pages: set[str] = set()
    event_images = EventImages(images or ImageResolver(None, adapter.name, dataset))
    for result in adapter.standardize(readable(), dataset_of(dataset)):
        yield from read_rejects
        read_rejects.clear()
        if isinstance(result, Tally):
            yield Row(TALLIES, {"name": result.name, "count": result.count})
            continue
        if isinstance(result, Rejection):
            yield _rejection_row(adapter, dataset, result)
            continue
        events = _event_rows(result)
        episode_id = f"{result.episode['source']}/{result.episode['source_id']}"
        ambiguous = result.episode["source_id"] in ambiguous_ids
        if not ambiguous and episode_id in seen_episodes:
            detail = f"episode {episode_id} appears earlier in this dataset"
            for record in result.members or [result.origin]:  # each of its records, once
                yield _rejection_row(adapter, dataset, Rejection(record, "duplicate_id", detail))
            continue
        # images first: their hashes are part of the events, and so of the content hash
        yield from (Row("images", row) for row in event_images.resolve(result.events, events))
        content_sha = _sha(events)
        if ambiguous:
            episode_id = _disambiguate(f"{episode_id}@{content_sha[:12]}", seen_episodes)
        seen_episodes.add(episode_id)
        records = tuple((r.file, r.record_index) for r in result.members or [result.origin])
        yield Row("episodes", {
            "episode_id": episode_id, "dataset": key, **result.episode,
            "source_file": result.origin.file, "source_record": result.origin.record_index,
            "num_events": len(events), "content_sha": content_sha, "schema_version": SCHEMA_VERSION,
        }, records)  # fmt: skip
        for event in events:
            yield Row("events", {"episode_id": episode_id, **event})
        yield from _page_rows(result, seen_pages, records)
        for candidate in result.candidates:
            yield Row("web_candidates", {"episode_id": episode_id, **candidate})
    yield from read_rejects
    for name, count in event_images.outcomes.items():
        yield Row(TALLIES, {"name": name, "count": count})


def _disambiguate(episode_id: str, seen: set[str]) -> str:
    """Exact copies of one record share a content hash; number the later copies."""
    candidate, copy = episode_id, 1
    while candidate in seen:
        copy += 1
        candidate = f"{episode_id}-{copy}"
    return candidate


def _event_rows(result: StandardRecord) -> list[dict[str, Any]]:
    rows = []
    for idx, event in enumerate(result.events):
        row = {"idx": idx, "kind": event["kind"], "actor": event["actor"]}
        row.update({column: event.get(column) for column in EVENT_COLUMNS})
        recorded = RECORDED if (row["description"] or "").strip() else None
        row["thought_source"] = event.get("thought_source") or recorded
        rows.append(row)
    return rows


def _page_rows(
    result: StandardRecord, seen_pages: set[str], records: tuple[tuple[str, int], ...]
) -> Iterator[Row]:
    for page in result.snapshots:
        if page["html_sha"] not in seen_pages:
            seen_pages.add(page["html_sha"])
            yield Row("dom_snapshots", page, records)


def _sha(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _rejection_row(adapter: SourceAdapter, dataset: str, rejection: Rejection) -> Row:
    record = rejection.record
    raw = {
        "file": record.file,
        "line": record.line,
        "record_index": record.record_index,
        "text": record.text,
    }
    row = _reject(adapter, dataset, raw, "standardize", rejection.reason, rejection.detail)
    return Row(row.table, row.values, ((record.file, record.record_index),))


def _reject(
    adapter: SourceAdapter,
    dataset: str,
    raw: dict[str, Any],
    stage: str,
    reason: str,
    detail: str | None,
) -> Row:
    text = raw.get("text")
    if isinstance(text, bytes):
        text = text[: 4 * REJECT_TEXT_CHARS].decode("utf-8", errors="replace")
    return Row("rejects", {
        "source": adapter.source_name(dataset_of(dataset)),
        "dataset": partition_key(adapter.name, dataset),
        "source_format": adapter.name, "file": raw["file"], "line": raw["line"],
        "record_index": raw["record_index"], "stage": stage, "reason": reason,
        "detail": detail or reason, "raw_text": text[:REJECT_TEXT_CHARS] if text else text,
    })  # fmt: skip
