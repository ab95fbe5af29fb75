"""Reading lake partitions back, whole or a row group at a time, from a local folder or a store."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.arrow_arrays import BINARY_OF_TEXT
from bigaction_assets.lake import Lake, local_root, partition_exists, partition_file, table_dir
from bigaction_assets.lakefs import ChangedWhileRead, LakeRoot
from bigaction_assets.read_ahead import read_ahead

T = TypeVar("T")

READ_ATTEMPTS = 3
"""Reads of a whole object-store partition that met a replacement, before giving up."""


def iter_partition_batches(
    lake: Lake, group: str, asset: str, partition: str, batch_rows: int = 256
) -> Iterator[pa.RecordBatch]:
    """Stream a partition back in bounded batches, so memory follows row-group size.

    Row group by row group: `ParquetFile.iter_batches` reads ahead and its memory grew with the
    file (431 MB after a 2 GB partition, against a flat 113 MB this way).
    """
    file = partition_file(lake, group, asset, partition)
    for batches in _row_groups(lake, file, lambda parquet, index: parquet.read_row_group(index)):
        yield from batches.to_batches(max_chunksize=batch_rows)


def iter_row_groups(
    lake: Lake, group: str, asset: str, partition: str, columns: list[str] | None = None
) -> Iterator[pa.Table]:
    """A partition row group by row group (only `columns`, if given), so memory follows
    row-group size; on an object store, one version of the object throughout."""
    file = partition_file(lake, group, asset, partition)
    yield from _row_groups(lake, file, lambda parquet, i: parquet.read_row_group(i, columns))


def _row_groups(
    lake: Lake, file: Path | str, read: Callable[[pq.ParquetFile, int], T]
) -> Iterator[T]:
    """`read(file, index)` of each row group of a partition file, in order. The reads happen
    here, inside the object-store guard, so a replaced object fails as ChangedWhileRead."""
    if isinstance(file, Path):
        parquet = pq.ParquetFile(file)
        for index in range(parquet.num_row_groups):
            yield read(parquet, index)
        return
    assert isinstance(lake, LakeRoot)
    with lake.consistent_read(file) as handle:
        parquet = pq.ParquetFile(handle)
        for index in range(parquet.num_row_groups):
            yield read(parquet, index)


def open_parquet(lake: Lake, group: str, asset: str, partition: str) -> pq.ParquetFile | None:
    """A partition's Parquet reader, for reads by row group and column; None when absent."""
    if not partition_exists(lake, group, asset, partition):
        return None
    return parquet_reader(lake, partition_file(lake, group, asset, partition))


def parquet_reader(lake: Lake, file: Path | str) -> pq.ParquetFile:
    """A Parquet reader of one of `table_files`'s files."""
    if isinstance(file, Path):
        return pq.ParquetFile(file)
    assert isinstance(lake, LakeRoot)
    return pq.ParquetFile(lake.open(file))


def table_files(lake: Lake, group: str, asset: str) -> list[Path | str]:
    """A table's partition files (paths) or objects (keys), in name order."""
    return _table_files(lake, group, asset, None)


def _table_files(lake: Lake, group: str, asset: str, partition: str | None) -> list[Path | str]:
    if partition is not None:
        return [partition_file(lake, group, asset, partition)]
    folder = local_root(lake)
    if folder is not None:
        return sorted(table_dir(folder, group, asset).glob("*.parquet"))
    assert isinstance(lake, LakeRoot)
    return list(lake.list_parquet(group, asset))


def iter_rows_and_sample(
    lake: Lake,
    group: str,
    asset: str,
    light: list[str],
    heavy: list[str],
    sampled: Callable[[int, dict[str, Any]], bool],
    partition: str | None = None,
    heavy_as_utf8: bool = False,
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every row's `light` columns, with its `heavy` columns for the rows `sampled(position,
    light row)` picks (else None): a check sees every row's counts and re-reads the long texts
    of a sample, which are converted to Python for those rows only. `heavy_as_utf8`: text
    columns come as their UTF-8 bytes, for a parser that takes them as they are (orjson reads
    bytes a third faster than a string decoded from them first)."""
    positions = itertools.count()  # every row's place across files, asked in order

    def read(parquet: pq.ParquetFile, index: int) -> list[tuple[dict, dict | None]]:
        rows = parquet.read_row_group(index, columns=light).to_pylist()
        picked = [k for k, row in enumerate(rows) if sampled(next(positions), row)]
        chosen: dict[int, dict[str, Any]] = {}
        if picked:
            # converted where they lie: Arrow's `take` first copied the picked texts into new
            # arrays, 7x the time of converting them (0.18 s for 43 MB of SFT renderings)
            table = parquet.read_row_group(index, columns=heavy)
            columns = [(name, _as_utf8(table.column(name), heavy_as_utf8)) for name in heavy]
            chosen = {k: {name: column[k].as_py() for name, column in columns} for k in picked}
        return [(row, chosen.get(k)) for k, row in enumerate(rows)]

    for path in _table_files(lake, group, asset, partition):
        # the next row group is read (decompressed, the sample converted) while the caller
        # checks this one's sample
        for pairs in read_ahead(_row_groups(lake, path, read)):
            yield from pairs


def _as_utf8(column: pa.ChunkedArray, wanted: bool) -> pa.ChunkedArray:
    """A text column viewed as the bytes it holds (the cast copies nothing), when `wanted`."""
    binary = BINARY_OF_TEXT.get(column.type)
    return column.cast(binary) if wanted and binary is not None else column


def iter_table_rows(
    lake: Lake, group: str, asset: str, columns: list[str], partition: str | None = None
) -> Iterator[dict[str, Any]]:
    """Rows of one partition of a table, or of all of them, one row group in memory at a time."""
    for path in _table_files(lake, group, asset, partition):
        for rows in _row_groups(lake, path, lambda f, i: f.read_row_group(i, columns=columns)):
            yield from rows.to_pylist()


def read_arrow(
    lake: Lake, group: str, asset: str, partition: str, columns: list[str] | None = None
) -> pa.Table:
    """A whole partition as an Arrow table; on an object store, read again if it was replaced
    meanwhile (a whole read can simply be taken again)."""
    return read_file_columns(lake, partition_file(lake, group, asset, partition), columns)


def read_file_columns(lake: Lake, file: Path | str, columns: list[str] | None = None) -> pa.Table:
    """One partition file (a path, or a key from a listing) as an Arrow table; on an object
    store, read again if it was replaced meanwhile."""
    if isinstance(file, Path):
        return pq.read_table(file, columns=columns)
    assert isinstance(lake, LakeRoot)
    for attempt in range(READ_ATTEMPTS):
        try:
            with lake.consistent_read(file) as handle:
                return pq.read_table(handle, columns=columns)
        except ChangedWhileRead:
            if attempt == READ_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def read_partition(
    lake: Lake, group: str, asset: str, partition: str, columns: list[str] | None = None
) -> pl.DataFrame:
    file = partition_file(lake, group, asset, partition)
    if isinstance(file, Path):
        return pl.read_parquet(file, columns=columns)
    return pl.from_arrow(read_arrow(lake, group, asset, partition, columns))  # type: ignore[return-value]
