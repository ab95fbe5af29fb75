"""Writers of one lake partition: a Parquet file that appears whole, on disk or in a store."""

from __future__ import annotations

import glob
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.durable import HeldFile, remove_abandoned, replace_unless_same
from bigaction_assets.lake import Lake, local_root, partition_key, partition_path
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.upload_spools import ABANDONED_AFTER_S, new_spool

COMPRESSION = "zstd"
# Row groups small enough that a reader can stream a partition of multi-megabyte HTML pages.
ROW_GROUP_ROWS = 2_000
# Arrow ends a data page once it passes 1 MB, but looks only after each batch of rows it
# writes (1,024 by default): a row group of 400 KB pages became one 56 MB page, which a
# reader decompresses whole to reach any row of it. Looking every 16 rows bounds a page to
# ~1 MB and 16 values; the files are as small, and as fast to write (benchmarks/README.md).
ROWS_PER_PAGE_CHECK = 16


def _compression(schema: pa.Schema) -> str | dict[str, str]:
    """zstd, but none for binary columns of a flat table: they hold files that are compressed
    already (PNG, JPEG, WebP), where zstd spends CPU to save nothing. (Per-column codecs name
    leaf paths, and a nested leaf left out would go uncompressed, hence flat tables only.)"""
    if not any(pa.types.is_large_binary(f.type) or pa.types.is_binary(f.type) for f in schema):
        return COMPRESSION
    if any(pa.types.is_nested(f.type) for f in schema):
        return COMPRESSION
    return {
        f.name: "NONE" if pa.types.is_large_binary(f.type) or pa.types.is_binary(f.type)
        else COMPRESSION
        for f in schema
    }  # fmt: skip


class PartitionWriter:
    """Appends Arrow batches to one Parquet file that appears only when the writer commits.

    The file is written as `.<name>.<32 hex>.tmp` beside its final place and held locked until
    it is renamed or deleted; a writer of the same partition later removes the ones whose
    writer was killed before it could (their lock is free)."""

    def __init__(self, final_path: Path, schema: pa.Schema) -> None:
        self.final_path = final_path
        final_path.parent.mkdir(parents=True, exist_ok=True)
        abandoned = final_path.parent.glob(f".{glob.escape(final_path.name)}.*.tmp")
        remove_abandoned(sorted(abandoned), min_age_s=ABANDONED_AFTER_S)
        tmp = final_path.with_name(f".{final_path.name}.{uuid.uuid4().hex}.tmp")
        self._open(HeldFile.create(tmp), schema)

    def _open(self, held: HeldFile, schema: pa.Schema) -> None:
        self.schema = schema
        self.rows = 0
        self._held = held
        self._tmp_path = held.path
        # Dictionary pages cost 3x on write and 5x on read for unique multi-megabyte texts
        # (pages, records) and save nothing that zstd does not already save.
        try:
            self._writer = pq.ParquetWriter(
                self._tmp_path,
                schema,
                compression=_compression(schema),
                use_dictionary=False,
                write_batch_size=ROWS_PER_PAGE_CHECK,
            )
        except BaseException:
            held.release()
            raise

    def write(self, frame: pl.DataFrame | pa.Table) -> None:
        table = frame.to_arrow() if isinstance(frame, pl.DataFrame) else frame
        if table.num_rows == 0:
            return
        table = table.select(self.schema.names).cast(self.schema)
        self._writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self.rows += table.num_rows

    def commit(self) -> bool:
        """Put the new file in place; returns False when the old one held the same bytes and
        was kept (a rerun with unchanged inputs then leaves the partition's mtime alone)."""
        try:
            self._writer.close()
            with open(self._tmp_path, "rb") as handle:
                os.fsync(handle.fileno())
            return replace_unless_same(self._tmp_path, self.final_path)
        finally:
            self._held.release()

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self._held.release()


class ObjectPartitionWriter(PartitionWriter):
    """A PartitionWriter whose file is spooled on the local disk and published at an object
    key on commit (lakefs.LakeRoot.put_file): the same bytes as on a local lake."""

    def __init__(self, root: LakeRoot, key: str, schema: pa.Schema) -> None:
        self.root, self.final_key = root, key
        self._open(new_spool(), schema)

    @property
    def final_path(self) -> str:  # type: ignore[override]  # a key, where callers show a path
        return self.root.url(self.final_key)

    def commit(self) -> bool:
        try:
            self._writer.close()
            return self.root.put_file(self._tmp_path, self.final_key)
        finally:
            self._held.release()


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
