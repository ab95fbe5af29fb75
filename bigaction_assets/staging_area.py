"""Where the raw step stages standardized tables: hidden files beside the lake's partitions, or
hidden objects beside them on an object-store lake."""

# Both keep one layout: a staged table at `<group>/<table>/.<key>.<pass>.staged` (named after the
# pass that wrote it, so a concurrent rerun never hands over another's) and its manifest at
# `raw/raw_records/.<key>.staged.json`, hidden from every reader (`*.parquet`). The hand-over is
# a rename on disk and a server-side move in a store: either shows the final name whole or not
# at all. The raw partition's stamp differs: an object's time has whole seconds only, so in a
# store the stamp also holds a hash of the Parquet footer (row counts, statistics, offsets),
# which any rewrite with other rows changes (one with the same bytes leaves the staged tables
# right anyway).

from __future__ import annotations

import hashlib
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from bigaction_assets.lake import Lake, local_root, partition_key, partition_path, table_dir
from bigaction_assets.lake_writer import ObjectPartitionWriter, PartitionWriter
from bigaction_assets.lakefs import LakeRoot

FOOTER_TAIL = 8  # a Parquet file ends with its footer's length (4 bytes) and `PAR1`


def staged_name(key: str, pass_id: str) -> str:
    return f".{key}.{pass_id}.staged"


MANIFEST = ".{key}.staged.json"


class FolderStaging:
    """Staged tables as hidden files of a local lake."""

    def __init__(self, lake: Path) -> None:
        self.lake = lake

    def staged_path(self, group: str, table: str, key: str, pass_id: str) -> Path:
        return table_dir(self.lake, group, table) / staged_name(key, pass_id)

    def manifest_path(self, key: str) -> Path:
        return table_dir(self.lake, "raw", "raw_records") / MANIFEST.format(key=key)

    def writer(
        self, group: str, table: str, key: str, pass_id: str, schema: pa.Schema
    ) -> PartitionWriter:
        return PartitionWriter(self.staged_path(group, table, key, pass_id), schema)

    def write_manifest(self, key: str, pass_id: str, data: bytes) -> None:
        path = self.manifest_path(key)
        tmp = path.with_name(f"{path.name}.{pass_id}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def read_manifest(self, key: str) -> bytes | None:
        try:
            return self.manifest_path(key).read_bytes()
        except FileNotFoundError:
            return None

    def delete_manifest(self, key: str) -> None:
        self.manifest_path(key).unlink(missing_ok=True)

    def raw_stamp(self, key: str, table: str = "raw_records") -> list[Any] | None:
        try:
            stat = partition_path(self.lake, "raw", table, key).stat()
        except FileNotFoundError:
            return None
        return [stat.st_size, stat.st_mtime_ns]

    def copy_partition(self, source: tuple[str, str], target: tuple[str, str], key: str) -> None:
        """Give `target` the partition file of `source` as it is: a second name for the same
        file (writers never change a file in place), or a copy where the disk has no links."""
        origin = partition_path(self.lake, *source, key)
        final = partition_path(self.lake, *target, key)
        if final.exists() and final.samefile(origin):
            return  # a rename onto a second name of the same file would do nothing
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")
        try:
            os.link(origin, tmp)
        except FileNotFoundError:
            raise
        except OSError:  # a disk without hard links
            shutil.copyfile(origin, tmp)
        os.replace(tmp, final)

    def hand_over(self, group: str, table: str, key: str, pass_id: str) -> None:
        """FileNotFoundError when the staged file is gone (a new pass discarded it)."""
        staged = self.staged_path(group, table, key, pass_id)
        os.replace(staged, partition_path(self.lake, group, table, key))

    def discard(self, group: str, tables: list[str], key: str) -> None:
        self.delete_manifest(key)
        for name in tables:
            for path in table_dir(self.lake, group, name).glob(f".{key}.*.staged"):
                path.unlink(missing_ok=True)


class StagedObjectWriter(ObjectPartitionWriter):
    """Spools a staged table and uploads it straight to its hidden key: no reader lists it and
    only the manifest, written after every table, vouches for it, so a cut upload is never
    taken and needs no publish step of its own."""

    def commit(self) -> bool:
        try:
            self._writer.close()
            pafs.copy_files(
                str(self._tmp_path),
                self.final_key,
                source_filesystem=pafs.LocalFileSystem(),
                destination_filesystem=self.root.filesystem,
            )
        finally:
            self._held.release()
        return True


class ObjectStaging:
    """Staged tables as hidden objects of an object-store lake."""

    def __init__(self, root: LakeRoot) -> None:
        self.root = root

    def staged_key(self, group: str, table: str, key: str, pass_id: str) -> str:
        return self.root.key(group, table, staged_name(key, pass_id))

    def manifest_key(self, key: str) -> str:
        return self.root.key("raw", "raw_records", MANIFEST.format(key=key))

    def writer(
        self, group: str, table: str, key: str, pass_id: str, schema: pa.Schema
    ) -> PartitionWriter:
        staged = self.staged_key(group, table, key, pass_id)
        return StagedObjectWriter(self.root, staged, schema)

    def write_manifest(self, key: str, pass_id: str, data: bytes) -> None:
        self.root.put_bytes(data, self.manifest_key(key))  # whole, or not at all

    def read_manifest(self, key: str) -> bytes | None:
        try:
            return self.root.read_bytes(self.manifest_key(key))
        except FileNotFoundError:
            return None

    def delete_manifest(self, key: str) -> None:
        self.root.delete(self.manifest_key(key))

    def raw_stamp(self, key: str, table: str = "raw_records") -> list[Any] | None:
        path = partition_key(self.root, "raw", table, key)
        info = self.root.filesystem.get_file_info(path)
        if info.type != pafs.FileType.File or info.size is None or info.size < FOOTER_TAIL:
            return None
        try:
            with self.root.open(path) as handle:
                handle.seek(info.size - FOOTER_TAIL)
                start = max(0, info.size - FOOTER_TAIL - int.from_bytes(handle.read(4), "little"))
                handle.seek(start)
                footer = handle.read(info.size - start)
        except FileNotFoundError:
            return None
        return [info.size, info.mtime_ns or 0, hashlib.sha256(footer).hexdigest()]

    def hand_over(self, group: str, table: str, key: str, pass_id: str) -> None:
        """FileNotFoundError when the staged object is gone (a new pass discarded it)."""
        source = self.staged_key(group, table, key, pass_id)
        try:
            self.root.move_object(source, partition_key(self.root, group, table, key))
        except (OSError, pa.ArrowException) as exc:
            if not self.root.exists(source):  # S3 answers a missing source with a plain error
                raise FileNotFoundError(source) from exc
            raise

    def copy_partition(self, source: tuple[str, str], target: tuple[str, str], key: str) -> None:
        """Give `target` the partition object of `source` as it is (a copy the store makes
        itself, in parts when it is over 5 GiB: the bytes do not come through here)."""
        self.root.copy_object(
            partition_key(self.root, *source, key), partition_key(self.root, *target, key)
        )

    def discard(self, group: str, tables: list[str], key: str) -> None:
        """The partition's manifest and staged objects (its own only: a glob's `.a.b.*` would
        also take the staged objects of a partition `a.b.c`)."""
        self.delete_manifest(key)
        mine = re.compile(rf"\.{re.escape(key)}\.[0-9a-f]{{32}}\.staged")
        for table in tables:
            selector = pafs.FileSelector(self.root.key(group, table), allow_not_found=True)
            for info in self.root.filesystem.get_file_info(selector):
                if info.type == pafs.FileType.File and mine.fullmatch(info.base_name):
                    self.root.delete(info.path)


StagingArea = FolderStaging | ObjectStaging


def staging_area(lake: Lake) -> StagingArea:
    folder = local_root(lake)
    if folder is not None:
        return FolderStaging(folder)
    assert isinstance(lake, LakeRoot)
    return ObjectStaging(lake)
