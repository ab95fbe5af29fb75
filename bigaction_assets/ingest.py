"""Landing files to raw records, and raw records read back: the first half of the spine's pure
core (the second, raw records to standardized rows: standardized_rows.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.images.refs import image_files
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import iter_partition_batches
from bigaction_assets.page_cuts import PageCursor, PagesMissing
from bigaction_assets.privacy.withhold import SenderFilter
from bigaction_assets.rerun.fingerprint import files_fingerprint
from bigaction_assets.sources import partition_key
from bigaction_assets.sources.base import SourceAdapter
from bigaction_assets.sources.raw_text import RawText

# raw records (a whole Mind2Web task each) run to megabytes: hand them on a few at a time
RAW_BATCH_ROWS = 8
# What the spine's sinks hold before validating and writing a batch: a contract check costs the
# same (~10 ms) for 6 raw records as for 24, and the spine streams gigabytes. At 64 M characters
# the one pass peaks at ~1.05 GB RSS for 2 GB of input (32 M: ~0.8 GB, ~4% more CPU).
SINK_CHARS = 64 * 1024 * 1024
SINK_ROWS = 20_000


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
            "pages": None,  # whole: the one pass may cut its pages out (`staging`)
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
    row group at a time, with the record text as UTF-8 bytes (what orjson takes), whole: the
    pages the raw step cut out of it are put back from `raw_pages`."""
    cursor = PageCursor(_raw_page_rows(lake, key))
    for batch in iter_partition_batches(lake, "raw", "raw_records", key, RAW_BATCH_ROWS):
        keep = pc.is_valid(batch["error"]) if unreadable else pc.is_null(batch["error"])
        table = pa.Table.from_batches([batch]).filter(keep)
        text = table.column("text").cast(pa.large_binary())
        table = table.set_column(table.schema.get_field_index("text"), "text", text)
        for row in table.to_pylist():
            try:
                row["text"] = cursor.restore(row["text"], row.pop("pages", None))
            except PagesMissing as missing:
                raise PagesMissing(
                    f"{key}: the record at {row['file']} line {row['line']} cannot be read whole: "
                    f"{missing} (materialize raw_records for this partition again)"
                ) from None
            row["pages"] = None
            yield row


def _raw_page_rows(lake: Lake, key: str) -> Iterator[dict[str, Any]]:
    """The partition's `raw_pages` rows in order, read only when a record needs them."""
    for batch in iter_partition_batches(lake, "raw", "raw_pages", key, RAW_BATCH_ROWS):
        yield from batch.to_pylist()
