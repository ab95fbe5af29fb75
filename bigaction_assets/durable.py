"""Durable small-file writes: once `write_durably` returns, the file survives a crash whole.

Both writers here leave a file alone when it already holds the bytes they would write, so a
rerun that computes the same output keeps the file's inode and mtime: readers that key on them
(the rerun stamps, rsync, the Hub's dedup) see nothing changed.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
import uuid
from collections.abc import Iterable
from pathlib import Path

CHUNK = 1 << 20
TMP_SUFFIX = ".tmp"


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def holds(path: Path, data: bytes) -> bool:
    """Whether `path` is a file whose bytes are exactly `data`."""
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return False


def same_files(first: Path, second: Path) -> bool:
    """Byte-for-byte equality of two files, read a chunk at a time (sizes compared first)."""
    try:
        if first.stat().st_size != second.stat().st_size:
            return False
    except FileNotFoundError:
        return False
    with open(first, "rb") as a, open(second, "rb") as b:
        while True:
            left, right = a.read(CHUNK), b.read(CHUNK)
            if left != right:
                return False
            if not left:
                return True


def replace_unless_same(tmp: Path, path: Path) -> bool:
    """Move a finished `tmp` onto `path`, or drop it when `path` already holds its bytes.
    Returns whether `path` was replaced."""
    if same_files(tmp, path):
        tmp.unlink()
        return False
    os.replace(tmp, path)
    return True


def write_durably(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that, once this returns, the file survives a crash (a file
    that already holds `data` is left as it is)."""
    if holds(path, data):
        return
    created = [p for p in (path.parent, path.parent.parent) if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in reversed(created):  # a new day folder must itself be durable in its parent
        _fsync_dir(folder.parent)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}{TMP_SUFFIX}")
    try:
        with open(tmp, "wb") as handle:
            # held until the file is closed, or its writer dies: how start-up cleaning tells a
            # temp file being written from one a crash left behind
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class HeldFile:
    """A temporary file its writer holds locked for as long as it lives: `remove_abandoned` tells
    it from one a killed writer left behind (a `kill -9`, an out-of-memory kill, a lost node)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd
        fcntl.flock(fd, fcntl.LOCK_EX)

    @classmethod
    def create(cls, path: Path) -> HeldFile:
        """A new, empty file at `path` (refused if one is there)."""
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC
        return cls(path, os.open(path, flags, 0o666))  # as open() would: the umask decides

    @classmethod
    def in_temp_folder(cls, prefix: str, suffix: str = TMP_SUFFIX) -> HeldFile:
        """A new, empty file in the temporary folder, named `<prefix><random><suffix>`."""
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix)
        return cls(Path(name), fd)

    def release(self) -> None:
        """Delete the file if it is still at its path (it may have been renamed into place),
        then let go of it."""
        if self._fd < 0:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = -1


def remove_abandoned(paths: Iterable[Path], *, min_age_s: float = 0.0) -> list[Path]:
    """Delete those of `paths` whose writer is gone: a live writer holds its file's lock
    (`HeldFile`, `write_durably`). With `min_age_s`, a file changed more recently than that is
    left too, in case its writer has created it and not yet locked it. Returns what was
    removed."""
    removed: list[Path] = []
    now = time.time()
    for path in paths:
        try:
            if min_age_s and now - path.stat().st_mtime < min_age_s:
                continue
            with open(path, "rb") as handle:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                path.unlink()
        except BlockingIOError:  # its writer is alive and holds it
            continue
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            continue  # renamed or removed meanwhile, or not ours to remove
        removed.append(path)
    return removed


def remove_orphaned_temps(folder: Path) -> list[Path]:
    """Delete the temp files `write_durably` left under `folder` when its writer died (a crash,
    a kill) before renaming them; one still being written holds its lock and is left alone.
    Returns what was removed."""
    if not folder.is_dir():
        return []
    return remove_abandoned(sorted(folder.rglob(f".*{TMP_SUFFIX}")))
