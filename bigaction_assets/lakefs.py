"""The lake's root as a URI, a local folder or `s3://bucket/prefix`, reached through pyarrow.fs.

A local root (a path, or `file://`) is the default and is handled by lake.py exactly as before;
an `s3://` root is any S3-protocol store (AWS S3, MinIO, GCS's S3 API, moto's server). Objects
are written whole or not at all: a partition is written to a local spool file, uploaded under a
hidden temporary key beside its final one, and moved onto it by a server-side copy (in parts
for an object over 5 GiB: `LakeRoot.copy_object`), which S3 makes visible in one step.
(pyarrow's S3 output stream would complete its multipart upload when it is closed on an error,
publishing half a file under the final key: hence the detour.)
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

from bigaction_assets.s3_settings import S3Settings
from bigaction_assets.upload_spools import new_spool

CHUNK = 1 << 20
WHOLE_READ_BYTES = 64 << 20
"""An object up to this size is read in one GET (`LakeRoot.consistent_read`)."""
COPY_OBJECT_BYTES = 5 << 30
"""The largest source S3's CopyObject takes (5 GiB), which is all pyarrow's `copy_file` and
`move` send; a larger object is copied in parts by the store (`LakeRoot.copy_object`)."""


class ChangedWhileRead(RuntimeError):
    """A partition was replaced by a newer one while it was being read; read it again."""

    def __init__(self, key: str) -> None:
        super().__init__(f"{key} was replaced while it was read; nothing was taken from it")


@dataclass(frozen=True)
class LakeRoot:
    """A lake root on some filesystem.

    Attributes:
        uri: as configured (`/data/lake`, `s3://bucket/prefix`).
        filesystem: the pyarrow filesystem holding it.
        base: the root's path inside `filesystem` (`/data/lake`, `bucket/prefix`).
        s3: the store's settings for an s3:// root; None for a local one.
    """

    uri: str
    filesystem: pafs.FileSystem
    base: str
    s3: S3Settings | None = None

    @property
    def is_local(self) -> bool:
        return self.s3 is None

    def key(self, *parts: str) -> str:
        """The filesystem path of `parts` under the root."""
        return "/".join([self.base, *parts])

    def url(self, key: str) -> str:
        """A key as a URL that DuckDB (with `register` done) and people can read."""
        return key if self.is_local else f"s3://{key}"

    def list_parquet(self, *parts: str) -> list[str]:
        """Keys of the Parquet files directly under `parts`, sorted; temporary keys (hidden,
        not ending in `.parquet`) are never listed, so no reader meets a file being written."""
        return [key for key, _, _ in self.list_parquet_stamps(*parts)]

    def list_parquet_stamps(self, *parts: str) -> list[tuple[str, int, int]]:
        """`list_parquet` with each object's size and modification time (one listing, no
        request per object)."""
        selector = pafs.FileSelector(self.key(*parts), allow_not_found=True)
        return sorted(
            (info.path, info.size, info.mtime_ns)
            for info in self.filesystem.get_file_info(selector)
            if info.type == pafs.FileType.File
            and info.base_name.endswith(".parquet")
            and not info.base_name.startswith(".")
        )

    def list_dirs(self, *parts: str) -> list[str]:
        """Names of the folders (common prefixes) directly under `parts`, sorted."""
        selector = pafs.FileSelector(self.key(*parts), allow_not_found=True)
        infos = self.filesystem.get_file_info(selector)
        return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)

    def list_files(self, *parts: str) -> list[str]:
        """Keys of every file under `parts`, however deep, sorted; hidden ones (a writer's
        temporary keys) left out."""
        selector = pafs.FileSelector(self.key(*parts), recursive=True, allow_not_found=True)
        return sorted(
            info.path
            for info in self.filesystem.get_file_info(selector)
            if info.type == pafs.FileType.File and not info.base_name.startswith(".")
        )

    def exists(self, key: str) -> bool:
        return self.filesystem.get_file_info(key).type == pafs.FileType.File

    def open(self, key: str) -> pa.NativeFile:
        """A random-access reader (what Parquet needs: the footer first)."""
        return self.filesystem.open_input_file(key)

    def _stamp(self, key: str) -> tuple[int | None, int | None]:
        return _stamp(self.filesystem.get_file_info(key))

    @contextmanager
    def consistent_read(self, key: str) -> Iterator[pa.NativeFile]:
        """A reader of `key` that fails with ChangedWhileRead, never with mixed bytes, when the
        object is replaced while it is read: a random-access read of an object is many ranged
        GETs, and each may meet the newer object (a local file keeps its old inode instead).

        An object of up to WHOLE_READ_BYTES is taken in one GET and read from memory: one
        request instead of one per column chunk and the footer's (on moto's server a request
        costs about as much CPU as 2 MB of its body)."""
        info = self.filesystem.get_file_info(key)
        before = _stamp(info)
        whole = not self.is_local and info.size is not None and info.size <= WHOLE_READ_BYTES
        try:
            if info.type != pafs.FileType.File:
                raise FileNotFoundError(f"no object at {key}")
            if whole:
                with self.filesystem.open_input_file(key) as remote:
                    data = remote.read()
                if len(data) != info.size:  # replaced by a shorter object since the look
                    raise ChangedWhileRead(key)
                handle: pa.NativeFile = pa.BufferReader(data)
            else:
                handle = self.filesystem.open_input_file(key)
            with handle:
                yield handle
        except (OSError, pa.ArrowException) as exc:
            if self._stamp(key) != before:
                raise ChangedWhileRead(key) from exc
            raise
        if self._stamp(key) != before:  # a GET sized by the look may have cut a larger one
            raise ChangedWhileRead(key)

    def read_bytes(self, key: str) -> bytes:
        with self.open(key) as handle:
            return handle.read()

    def holds_same(self, spool: Path, key: str) -> bool:
        """Whether the object at `key` has exactly the bytes of the local file `spool`."""
        info = self.filesystem.get_file_info(key)
        if info.type != pafs.FileType.File or info.size != spool.stat().st_size:
            return False
        with self.open(key) as remote, open(spool, "rb") as local:
            while True:
                left, right = local.read(CHUNK), remote.read(CHUNK)
                if left != right:
                    return False
                if not left:
                    return True

    def put_file(self, spool: Path, key: str) -> bool:
        """Publish the finished local file `spool` at `key` whole, or leave `key` as it was;
        False when `key` already held these bytes (then nothing is written)."""
        if self.holds_same(spool, key):
            return False
        directory, _, name = key.rpartition("/")
        temporary = f"{directory}/.{name}.{uuid.uuid4().hex}.tmp"
        local = pafs.LocalFileSystem()
        try:
            pafs.copy_files(
                str(spool),
                temporary,
                source_filesystem=local,
                destination_filesystem=self.filesystem,
            )
            uploaded = self.filesystem.get_file_info(temporary).size
            if uploaded != spool.stat().st_size:  # never publish a short upload
                raise OSError(f"upload of {key} stored {uploaded} of {spool.stat().st_size} bytes")
            self.move_object(temporary, key, size=uploaded)  # S3: a server-side copy, a delete
        except BaseException:
            _delete_quietly(self.filesystem, temporary)
            raise
        return True

    def put_bytes(self, data: bytes, key: str) -> bool:
        """`put_file` for a small payload held in memory (manifests, SFT files)."""
        spool = new_spool()
        try:
            spool.path.write_bytes(data)
            return self.put_file(spool.path, key)
        finally:
            spool.release()

    def delete(self, key: str) -> None:
        _delete_quietly(self.filesystem, key)

    def copy_object(self, source: str, target: str, size: int | None = None) -> None:
        """`target` made a copy of `source` by the store itself (the bytes do not come through
        here), at any size: over `COPY_OBJECT_BYTES`, which S3 refuses to copy in one request
        ("larger than the maximum allowable size for a copy source"), as a multipart upload
        whose parts are copied ranges of the source (UploadPartCopy, through s3fs). `size`:
        the source's, where the caller knows it (else one more request asks the store)."""
        if not self._too_large_to_copy_whole(source, size):
            self.filesystem.copy_file(source, target)
            return
        assert self.s3 is not None
        try:
            parts = self.s3.fsspec()
        except ImportError as exc:
            raise RuntimeError(
                f"{source} is over {COPY_OBJECT_BYTES >> 30} GiB, which S3 copies only in "
                "parts, through s3fs: install the cluster extra (uv sync --extra cluster)"
            ) from exc
        parts.copy(source, target)

    def move_object(self, source: str, target: str, size: int | None = None) -> None:
        """`source` renamed to `target`: on S3 a copy (`copy_object`, so at any size) and a
        delete; `target` is whole the moment it appears."""
        if not self._too_large_to_copy_whole(source, size):
            self.filesystem.move(source, target)
            return
        self.copy_object(source, target, size)
        self.filesystem.delete_file(source)

    def _too_large_to_copy_whole(self, key: str, size: int | None) -> bool:
        if self.s3 is None:
            return False
        if size is None:
            size = self.filesystem.get_file_info(key).size  # None when it is not there
        return size is not None and size > COPY_OBJECT_BYTES

    def beside(self, name: str) -> LakeRoot:
        """A root next to this one (`s3://b/p/lake` -> `s3://b/p/<name>`): where the outputs
        that are folders of files (SFT files, the release) are published."""
        parent, _, _ = self.base.rpartition("/")
        if not parent:
            raise ValueError(f"lake URI {self.uri} has no folder above it for {name!r}")
        uri = f"s3://{parent}/{name}" if self.s3 is not None else f"{parent}/{name}"
        return LakeRoot(uri=uri, filesystem=self.filesystem, base=f"{parent}/{name}", s3=self.s3)

    def child(self, name: str) -> LakeRoot:
        """A root inside this one (`<root>/<name>`)."""
        uri = f"{self.uri.rstrip('/')}/{name}"
        return LakeRoot(uri=uri, filesystem=self.filesystem, base=self.key(name), s3=self.s3)

    def publish_folder(self, folder: Path, last: tuple[str, ...] = ()) -> dict[str, str]:
        """Make the objects under this root the files of the local `folder`: each file published
        whole (put_file; unchanged ones are not uploaded), those named in `last` (paths in
        `folder`: a manifest of the others) after the rest, then objects that are no file of it
        any more deleted. Returns each file's URL by its path in `folder`."""
        keys = {}
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if not path.name.startswith("."):  # temporary files of a writer
                keys[self.key(path.relative_to(folder).as_posix())] = path
        ordered = sorted(keys.items(), key=lambda kv: kv[1].relative_to(folder).as_posix() in last)
        for key, path in ordered:
            self.put_file(path, key)
        selector = pafs.FileSelector(self.base, recursive=True, allow_not_found=True)
        for info in self.filesystem.get_file_info(selector):
            if info.type == pafs.FileType.File and info.path not in keys:
                self.delete(info.path)
        return {str(path): self.url(key) for key, path in keys.items()}


def _stamp(info: pafs.FileInfo) -> tuple[int | None, int | None]:
    return (info.size, info.mtime_ns) if info.type == pafs.FileType.File else (None, None)


def _delete_quietly(filesystem: pafs.FileSystem, key: str) -> None:
    # gone already, or the store is away: there is nothing more to undo
    with contextlib.suppress(FileNotFoundError, OSError):
        filesystem.delete_file(key)
