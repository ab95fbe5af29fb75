"""Landing files to raw records, and raw records to standardized rows: the spine's pure core."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.images.events import EventImages
from bigaction_assets.images.refs import image_files
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import iter_partition_batches
from bigaction_assets.privacy.withhold import SenderFilter
from bigaction_assets.rerun.fingerprint import files_fingerprint
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
from bigaction_assets.sources.jsonstream import UNPARSED, RawText

REJECT_TEXT_CHARS = 4_000
# raw records (a whole Mind2Web task each) run to megabytes: hand them on a few at a time
RAW_BATCH_ROWS = 8
# What the spine's sinks hold before validating and writing a batch: a contract check costs the
# same (~10 ms) for 6 raw records as for 24, and the spine streams gigabytes. At 64 M characters
# the one pass peaks at ~1.05 GB RSS for 2 GB of input (32 M: ~0.8 GB, ~4% more CPU).
SINK_CHARS = 64 * 1024 * 1024
SINK_ROWS = 20_000
EVENT_COLUMNS = (
    "content", "name", "function", "kwargs", "language", "description", "url", "axtree",
    "html_sha", "viewport_width", "viewport_height", "image_path", "bbox", "extra",
    "image_sha", "answer_image_sha", "image_error",
)  # fmt: skip
# Rows of this name carry an adapter's `Tally` (`name`, `count`) to the stage's metadata.
TALLIES = "tallies"
RECORDED = "recorded"  # events.thought_source of a thought that came with the record


def discover(landing: Path, registry: dict[str, SourceAdapter]) -> dict[str, list[Path]]:
    """Every landing dataset as `{partition key: files}`, from `<landing>/<adapter>/...`."""
    found: dict[str, list[Path]] = {}
    for name, adapter in registry.items():
        for dataset, files in adapter.dataset_files(landing / name).items():
            found[partition_key(name, dataset)] = files
    return found


def dataset_fingerprint(landing: Path, key: str, files: list[Path]) -> str:
    """What a landing dataset is made of: its files' contents and those of its image folders
    (a screenshot added or changed rebuilds the dataset; a `touch` rebuilds nothing)."""
    adapter_name, _, dataset = key.partition(".")
    images = image_files(landing / adapter_name, dataset)
    return files_fingerprint([*files, *images], landing)


def dataset_files(landing: Path, adapter: SourceAdapter, dataset: str) -> list[Path]:
    files = adapter.dataset_files(landing / adapter.name).get(dataset)
    if not files:
        raise FileNotFoundError(
            f"no landing files for dataset {dataset!r} under {landing / adapter.name}"
        )
    return files


def raw_records(
    adapter: SourceAdapter,
    dataset: str,
    files: list[Path],
    landing: Path,
    withhold: SenderFilter | None = None,
) -> Iterator[dict[str, Any]]:
    """Every record of the dataset's files as a `raw_records` row; unreadable ones carry why."""
    for row, _ in parsed_raw_records(adapter, dataset, files, landing, withhold):
        yield row


def parsed_raw_records(
    adapter: SourceAdapter,
    dataset: str,
    files: list[Path],
    landing: Path,
    withhold: SenderFilter | None = None,
) -> Iterator[tuple[dict[str, Any], Any]]:
    """`raw_records` rows, each with the record's value when reading it parsed it (else
    `UNPARSED`): what a pass that also standardizes needs. Records of forgotten senders that
    `withhold` knows are left out (it counts them)."""
    key = partition_key(adapter.name, dataset)
    relative: dict[Path, str] = {}
    for path, raw in _partition_records(adapter, dataset, files):
        if path not in relative:
            inside = path.is_relative_to(landing)
            relative[path] = path.relative_to(landing).as_posix() if inside else str(path)
        if withhold is not None and withhold.withholds(raw.data):
            continue
        row = {
            "dataset": key,
            "source_format": adapter.name,
            "file": relative[path],
            "line": raw.line,
            "record_index": raw.record_index,
            "byte_offset": raw.byte_offset,
            "record_id": raw.record_id,
            "text": raw.data,  # UTF-8 bytes: Arrow stores them without a round trip
            "error": raw.error,
            "error_detail": raw.error_detail,
        }
        yield row, raw.value


def _partition_records(
    adapter: SourceAdapter, dataset: str, files: list[Path]
) -> Iterator[tuple[Path, RawText]]:
    """The records a partition is made of, each with its file: the files whole, in order,
    unless the adapter reads a shard's edges itself (`read_partition`, Mind2Web's step rows)."""
    read_partition = getattr(adapter, "read_partition", None)
    if read_partition is not None:
        return read_partition(dataset, files)
    return ((path, raw) for path in files for raw in adapter.read(path))


def raw_partition_rows(lake: Lake, key: str, *, unreadable: bool) -> Iterator[dict[str, Any]]:
    """The `raw_records` rows of one partition that could (or could not) be read, streamed a
    row group at a time, with the record text as UTF-8 bytes (what orjson takes)."""
    for batch in iter_partition_batches(lake, "raw", "raw_records", key, RAW_BATCH_ROWS):
        keep = pc.is_valid(batch["error"]) if unreadable else pc.is_null(batch["error"])
        table = pa.Table.from_batches([batch]).filter(keep)
        text = table.column("text").cast(pa.large_binary())
        yield from table.set_column(table.schema.get_field_index("text"), "text", text).to_pylist()


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
        yield Row("episodes", {
            "episode_id": episode_id, "dataset": key, **result.episode,
            "source_file": result.origin.file, "source_record": result.origin.record_index,
            "num_events": len(events), "content_sha": content_sha, "schema_version": SCHEMA_VERSION,
        })  # fmt: skip
        for event in events:
            yield Row("events", {"episode_id": episode_id, **event})
        yield from _page_rows(result, seen_pages)
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


def _page_rows(result: StandardRecord, seen_pages: set[str]) -> Iterator[Row]:
    for page in result.snapshots:
        if page["html_sha"] not in seen_pages:
            seen_pages.add(page["html_sha"])
            yield Row("dom_snapshots", page)


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
    return _reject(adapter, dataset, raw, "standardize", rejection.reason, rejection.detail)


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
