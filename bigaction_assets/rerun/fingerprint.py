"""Content fingerprints: what a landing dataset, a folder of inputs or a build step is made of.

A file is known by the sha256 of its bytes, never by its size and mtime alone: `touch` must not
count as a change, and an edit that keeps the size and puts the old mtime back must. Digests are
remembered keyed by (size, mtime_ns, ctime_ns, inode) as well: in the process (the sensor's
code server does not rehash an untouched file) and, for `make demo`, on disk in
`<data_dir>/cache/file-sha256.sqlite` (`keep_digests_in`), so a no-change
`make demo` stats the landing files instead of reading them again (gigabytes at real sizes:
sha256 runs at ~0.5 GB/s here). ctime is the part of the key that `touch -d` and `os.utime`
cannot set back, so an edit always misses the memo, in memory or on disk.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson

CHUNK = 1 << 20
DIGEST_MEMO = "file-sha256.sqlite"
log = logging.getLogger(__name__)
_DISK: DigestMemo | None = None
_MEMO: dict[str, tuple[tuple[int, int, int, int], str]] = {}


def stat_key(path: Path) -> tuple[int, int, int, int]:
    """What changes whenever a file is rewritten or edited, even with its mtime put back."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes (memoized while its stat key stays the same)."""
    return file_digests([path])[path]


def file_digests(paths: Iterable[Path]) -> dict[Path, str]:
    """sha256 of each file's bytes: from the memo in memory, else the one on disk, else read
    (and then remembered in both)."""
    keys = {path: stat_key(path) for path in paths}
    found: dict[Path, str] = {}
    for path, key in keys.items():
        memo = _MEMO.get(str(path))
        if memo is not None and memo[0] == key:
            found[path] = memo[1]
    disk = _disk_memo()
    missing = {path: key for path, key in keys.items() if path not in found}
    if disk is not None and missing:
        for path, digest in disk.lookup(missing).items():
            found[path] = digest
            _MEMO[str(path)] = (missing[path], digest)
    hashed = {}
    for path, key in keys.items():
        if path not in found:
            found[path] = hashed[path] = _sha256_of(path)
            # a file rewritten while it was read is caught next time: its stat key moved on
            _MEMO[str(path)] = (key, found[path])
    if disk is not None and hashed:
        disk.remember({path: (keys[path], digest) for path, digest in hashed.items()})
    return found


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class DigestMemo:
    """File digests by path and stat key in a SQLite file. Only a cache: one it cannot use is
    reported and read around (the files are hashed)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)  # rollback journal: fine on any volume
        con.execute(
            "create table if not exists digests (path text primary key, size integer, "
            "mtime_ns integer, ctime_ns integer, inode integer, sha256 text not null)"
        )
        return con

    def lookup(self, keys: dict[Path, tuple[int, int, int, int]]) -> dict[Path, str]:
        """The digests stored for these paths under exactly these stat keys."""
        if not self.path.exists():
            return {}
        names = {str(path): path for path in keys}
        try:
            with closing(self._connect()) as con:
                rows = []
                listed = list(names)
                for start in range(0, len(listed), 500):
                    chunk = listed[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows += con.execute(
                        "select path, size, mtime_ns, ctime_ns, inode, sha256 from digests "
                        f"where path in ({marks})",
                        chunk,
                    ).fetchall()
        except sqlite3.Error as error:
            log.warning("file digests in %s unreadable, hashing the files: %s", self.path, error)
            return {}
        return {
            names[name]: digest for name, *stat, digest in rows if tuple(stat) == keys[names[name]]
        }

    def remember(self, digests: dict[Path, tuple[tuple[int, int, int, int], str]]) -> None:
        try:
            with closing(self._connect()) as con, con:
                con.executemany(
                    "insert or replace into digests values (?, ?, ?, ?, ?, ?)",
                    [(str(path), *key, digest) for path, (key, digest) in digests.items()],
                )
        except (sqlite3.Error, OSError) as error:
            log.warning("file digests not kept in %s: %s", self.path, error)


def keep_digests_in(folder: Path | None) -> None:
    """Remember digests on disk in `folder` from now on in this process (None: in memory only,
    the default). `make demo` keeps them in `<data_dir>/cache`, so that its next run stats the
    landing files instead of reading them."""
    global _DISK
    _DISK = DigestMemo(folder / DIGEST_MEMO) if folder is not None else None


def _disk_memo() -> DigestMemo | None:
    return _DISK


def combine(*parts: Any) -> str:
    """One digest of JSON-able parts (dicts with sorted keys), 16 bytes of sha256 in hex."""
    data = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(data).hexdigest()[:32]


def files_fingerprint(files: Iterable[Path], root: Path | None = None) -> str:
    """The fingerprint of a set of files: their names (relative to `root` when under it) and
    their contents. Adding, removing, renaming or editing a file changes it; `touch` does not."""
    ordered = sorted(files)
    digests = file_digests(ordered)
    entries = []
    for path in ordered:
        name = (
            path.relative_to(root).as_posix() if root and path.is_relative_to(root) else str(path)
        )
        entries.append((name, digests[path]))
    return combine(entries)


def folder_fingerprint(folder: Path) -> str:
    """Every file under `folder` (none when it does not exist), as `files_fingerprint`."""
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return files_fingerprint(files, folder)


def file_states(
    data: Path, skip: tuple[str, ...] = ("dagster/", "cache/")
) -> dict[str, tuple[int, int, str]]:
    """Every file under `data` but those under `skip` (Dagster's state, this machine's caches):
    (mtime_ns, inode, sha256), to see
    which files a run rewrote (the rerun benchmark and its tests compare two of these)."""
    state = {}
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        relative = path.relative_to(data).as_posix()
        if not relative.startswith(skip):
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[relative] = (stat.st_mtime_ns, stat.st_ino, digest)
    return state
