"""The Parquet lake: one file per asset partition, written atomically, with a DuckDB catalog.

`lake` is a local folder (a Path: the default, handled as it always was) or a `LakeRoot` from
lakefs.py (an object store: the same files, published whole through pyarrow.fs).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.lake_sql import QUERY_MEMORY_LIMIT, query_connection, register, stream_rows
from bigaction_assets.lake_writer import (
    COMPRESSION,
    ROW_GROUP_ROWS,
    ObjectPartitionWriter,
    PartitionWriter,
)
from bigaction_assets.lakefs import ChangedWhileRead, LakeRoot
from bigaction_assets.read_ahead import read_ahead

if TYPE_CHECKING:
    from bigaction_assets.row_counts import RowCounts

__all__ = [
    "COMPRESSION",
    "QUERY_MEMORY_LIMIT",
    "ROW_GROUP_ROWS",
    "ObjectPartitionWriter",
    "PartitionWriter",
    "query_connection",
    "register",
    "stream_rows",
]

T = TypeVar("T")
Lake = Path | LakeRoot
"""A lake root: a local folder, or a root on some filesystem (lakefs.parse_lake)."""


def table_dir(lake: Path, group: str, asset: str) -> Path:
    return lake / group / asset


def partition_path(lake: Path, group: str, asset: str, partition: str) -> Path:
    """`<lake>/<group>/<asset>/<partition>.parquet`; an unpartitioned asset uses `all`."""
    if "/" in partition or partition.startswith("."):
        raise ValueError(f"partition key {partition!r} cannot name a file")
    return table_dir(lake, group, asset) / f"{partition}.parquet"


READ_ATTEMPTS = 3
"""Reads of a whole object-store partition that met a replacement, before giving up."""


def local_root(lake: Lake) -> Path | None:
    """The folder of a local lake (a Path, or a LakeRoot on the local disk); None for a store."""
    if isinstance(lake, Path):
        return lake
    return Path(lake.base) if lake.is_local else None


def partition_key(root: LakeRoot, group: str, asset: str, partition: str) -> str:
    """The object key of a partition: `partition_path`'s layout under the root."""
    return root.key(group, asset, partition_path(Path("."), group, asset, partition).name)


def partition_writer(
    lake: Lake, group: str, asset: str, partition: str, schema: pa.Schema
) -> PartitionWriter:
    folder = local_root(lake)
    if folder is not None:
        return PartitionWriter(partition_path(folder, group, asset, partition), schema)
    assert isinstance(lake, LakeRoot)
    return ObjectPartitionWriter(lake, partition_key(lake, group, asset, partition), schema)


@contextmanager
def open_partition(
    lake: Lake, group: str, asset: str, partition: str, schema: pa.Schema
) -> Iterator[PartitionWriter]:
    """Write a partition atomically: readers see the old file or the whole new one, never half."""
    writer = partition_writer(lake, group, asset, partition, schema)
    try:
        yield writer
    except BaseException:
        writer.abort()
        raise
    writer.commit()


def write_partition(
    lake: Lake, group: str, asset: str, partition: str, frame: pl.DataFrame
) -> Path | str:
    """Replace one partition with a whole frame."""
    schema = frame.to_arrow().schema
    with open_partition(lake, group, asset, partition, schema) as writer:
        writer.write(frame)
    return writer.final_path


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


def partition_file(lake: Lake, group: str, asset: str, partition: str) -> Path | str:
    folder = local_root(lake)
    if folder is not None:
        return partition_path(folder, group, asset, partition)
    assert isinstance(lake, LakeRoot)
    return partition_key(lake, group, asset, partition)


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


def partition_exists(lake: Lake, group: str, asset: str, partition: str) -> bool:
    file = partition_file(lake, group, asset, partition)
    if isinstance(file, Path):
        return file.exists()
    assert isinstance(lake, LakeRoot)
    return lake.exists(file)


def partition_url(lake: Lake, group: str, asset: str, partition: str) -> str:
    """Where DuckDB reads a partition: its path, or its `s3://` URL on a connection that
    `register` gave the lake's store (`query_connection(lake)`)."""
    file = partition_file(lake, group, asset, partition)
    if isinstance(file, Path):
        return file.as_posix()
    assert isinstance(lake, LakeRoot)
    return lake.url(file)


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


def footer_rows(lake: Lake, file: Path | str) -> int:
    """Rows of a partition file, read from its footer alone."""
    if isinstance(file, Path):
        return pq.read_metadata(file).num_rows
    assert isinstance(lake, LakeRoot)
    with lake.open(file) as handle:
        return pq.read_metadata(handle).num_rows


FOOTER_MEMO_SIZE = 65_536
FileVersion = tuple[str, int, int]  # name, size, modification time (ns)
_footer_memo: dict[FileVersion, int] = {}


def table_file_versions(lake: Lake, group: str, asset: str) -> list[tuple[Path | str, FileVersion]]:
    """A table's partition files (paths or keys), each with its version: on a store from one
    listing, with no request per object."""
    if local_root(lake) is None:
        assert isinstance(lake, LakeRoot)
        return [(key, (key, *stamp)) for key, *stamp in lake.list_parquet_stamps(group, asset)]
    versions: list[tuple[Path | str, FileVersion]] = []
    for path in table_files(lake, group, asset):
        try:
            stat = Path(path).stat()
        except FileNotFoundError:  # deleted since the listing
            continue
        versions.append((path, (str(path), stat.st_size, stat.st_mtime_ns)))
    return versions


def _table_prefix(lake: Lake, group: str, asset: str) -> str:
    """What the names in a table's file versions start with."""
    folder = local_root(lake)
    if folder is not None:
        return f"{table_dir(folder, group, asset)}/"
    assert isinstance(lake, LakeRoot)
    return f"{lake.key(group, asset)}/"


def table_rows(
    lake: Lake, group: str, asset: str, remembered: RowCounts | None = None
) -> tuple[int, int]:
    """Rows and partition files of a whole table, from the Parquet footers (`file_rows`)."""
    counts = file_rows(lake, group, asset, remembered)
    return sum(rows for _, rows in counts), len(counts)


def file_rows(
    lake: Lake, group: str, asset: str, remembered: RowCounts | None = None
) -> list[tuple[Path | str, int]]:
    """Each partition file of a table (path or key) with its rows, from the Parquet footers.
    A footer is read once per version of its file in this process (known by the size and
    modification time the listing gives), so the materializations of N partitions read N
    footers, not N^2; with `remembered`, once per version on this machine, whichever process
    asks. A file gone between the listing and its read is left out."""
    versions = table_file_versions(lake, group, asset)
    stored = remembered.known(_table_prefix(lake, group, asset)) if remembered else {}
    found, counted = [], {}
    for file, version in versions:
        count = _footer_memo.get(version, stored.get(version))
        if count is None:
            try:
                count = footer_rows(lake, file)
            except FileNotFoundError:  # deleted since the listing
                continue
        if version not in stored:
            counted[version] = count
        if len(_footer_memo) >= FOOTER_MEMO_SIZE:
            _footer_memo.clear()
        _footer_memo[version] = count
        found.append((file, count))
    if remembered is not None:
        listed = {version for _, version in versions}
        remembered.remember(counted, [v for v in stored if v not in listed])
    return found


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
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every row's `light` columns, with its `heavy` columns for the rows `sampled(position,
    light row)` picks (else None): a check sees every row's counts and re-reads the long texts
    of a sample, which are converted to Python for those rows only."""
    positions = itertools.count()  # every row's place across files, asked in order

    def read(parquet: pq.ParquetFile, index: int) -> list[tuple[dict, dict | None]]:
        rows = parquet.read_row_group(index, columns=light).to_pylist()
        picked = [k for k, row in enumerate(rows) if sampled(next(positions), row)]
        chosen: dict[int, dict[str, Any]] = {}
        if picked:
            # converted where they lie: Arrow's `take` first copied the picked texts into new
            # arrays, 7x the time of converting them (0.18 s for 43 MB of SFT renderings)
            table = parquet.read_row_group(index, columns=heavy)
            columns = [(name, table.column(name)) for name in heavy]
            chosen = {k: {name: column[k].as_py() for name, column in columns} for k in picked}
        return [(row, chosen.get(k)) for k, row in enumerate(rows)]

    for path in _table_files(lake, group, asset, partition):
        # the next row group is read (decompressed, the sample converted) while the caller
        # checks this one's sample
        for pairs in read_ahead(_row_groups(lake, path, read)):
            yield from pairs


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
