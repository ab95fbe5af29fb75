"""Stream the rows of a Parquet file as JSON records, a few rows in memory at a time."""

# Hub datasets are Parquet shards whose rows hold whole pages (megabytes of HTML) and images.
# pyarrow's `iter_batches` over a buffered stream reads a column chunk page by page, so memory
# follows the batch and one page per column (a page is the smallest unit Parquet can be read
# in); `read_row_group` would hold every column of a row group, i.e. most of a Hub shard.
# benchmarks/hub_parquet.py measures both.

from __future__ import annotations

import bisect
import datetime
import decimal
import hashlib
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.sources.raw_text import IdReader, RawText

BATCH_ROWS = 8
BUFFER_BYTES = 1 << 20


def binary_reference(data: bytes) -> dict[str, Any]:
    """What a record keeps of a binary value (an image's bytes): its sha256 and size. The
    bytes stay in the landing file; nothing in the lake stores them yet."""
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def json_ready(value: Any) -> Any:
    """A Parquet value as the JSON value the raw record stores and the adapter reads: bytes as
    their reference, times as ISO 8601 text, decimals as text, NaN and infinities as null."""
    if isinstance(value, dict):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(item) for item in value]
    if isinstance(value, bytes | bytearray | memoryview):
        return binary_reference(bytes(value))
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def _row_group_offsets(metadata: pq.FileMetaData) -> tuple[list[int], list[int]]:
    """First row and first byte of every row group: a row's `byte_offset` is its group's."""
    first_rows, offsets, row = [], [], 0
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        starts = []
        for column in range(group.num_columns):
            chunk = group.column(column)
            starts.append(chunk.dictionary_page_offset or chunk.data_page_offset)
        first_rows.append(row)
        offsets.append(min(starts, default=0))
        row += group.num_rows
    return first_rows, offsets


def _failed(index: int, error: str, detail: str, offset: int = 0) -> RawText:
    return RawText(index + 1, index, offset, b"", error, detail)


def iter_parquet_records(path: Path, record_id: IdReader) -> Iterator[RawText]:
    """Every row of a Parquet file as a JSON object keyed by column name (`line` is the row
    number from 1). A file Parquet cannot open is one `unreadable_file` record; rows that cannot
    be decoded are `unreadable_row` records, each with why."""
    try:
        parquet = pq.ParquetFile(path, buffer_size=BUFFER_BYTES, pre_buffer=False)
        first_rows, offsets = _row_group_offsets(parquet.metadata)
        batches = parquet.iter_batches(batch_size=BATCH_ROWS, use_threads=False)
    except (pa.ArrowException, OSError) as exc:
        yield _failed(0, "unreadable_file", f"not a Parquet file pyarrow can read: {exc}")
        return
    index = 0
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as exc:  # a damaged page: the rest cannot be read
            detail = f"rows from {index + 1} on cannot be read: {exc}"
            offset = offsets[bisect.bisect_right(first_rows, index) - 1] if offsets else 0
            yield _failed(index, "unreadable_row", detail, offset)
            return
        try:
            rows: list[Any] | None = batch.to_pylist()
        except (pa.ArrowException, UnicodeDecodeError):
            rows = None  # one bad value: find it row by row
        for position in range(batch.num_rows):
            offset = offsets[bisect.bisect_right(first_rows, index) - 1]
            row = rows[position] if rows is not None else None
            yield _row_record(batch, position, row, index, offset, record_id)
            index += 1


def _row_record(
    batch: pa.RecordBatch,
    position: int,
    row: dict[str, Any] | None,
    index: int,
    offset: int,
    record_id: IdReader,
) -> RawText:
    try:
        if row is None:
            row = batch.slice(position, 1).to_pylist()[0]
        row = json_ready(row)
        data = orjson.dumps(row)
    except (pa.ArrowException, UnicodeDecodeError, TypeError, orjson.JSONEncodeError) as exc:
        return _failed(index, "unreadable_row", f"row {index + 1}: {exc}", offset)
    return RawText(index + 1, index, offset, data, record_id=record_id(row), value=row)
