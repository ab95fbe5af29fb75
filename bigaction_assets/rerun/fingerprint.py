"""Content fingerprints: what a landing dataset, a folder of inputs or a build step is made of.

A file is known by the sha256 of its bytes, never by its size and mtime alone: `touch` must not
count as a change, and an edit that keeps the size and puts the old mtime back must. Digests are
remembered per process keyed by (size, mtime_ns, ctime_ns, inode) as well, so a long-lived
process (the sensor's code server) does not rehash an untouched file; ctime is the part of the
key that `touch -d` and `os.utime` cannot set back, so an edit always misses the memo.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

CHUNK = 1 << 20
_MEMO: dict[str, tuple[tuple[int, int, int, int], str]] = {}


def stat_key(path: Path) -> tuple[int, int, int, int]:
    """What changes whenever a file is rewritten or edited, even with its mtime put back."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes (memoized while its stat key stays the same)."""
    key = stat_key(path)
    name = str(path)
    memo = _MEMO.get(name)
    if memo is not None and memo[0] == key:
        return memo[1]
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    # a file rewritten while it was read is caught next time: its stat key moved on
    _MEMO[name] = (key, digest.hexdigest())
    return digest.hexdigest()


def combine(*parts: Any) -> str:
    """One digest of JSON-able parts (dicts with sorted keys), 16 bytes of sha256 in hex."""
    data = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    return hashlib.sha256(data).hexdigest()[:32]


def files_fingerprint(files: Iterable[Path], root: Path | None = None) -> str:
    """The fingerprint of a set of files: their names (relative to `root` when under it) and
    their contents. Adding, removing, renaming or editing a file changes it; `touch` does not."""
    entries = []
    for path in sorted(files):
        name = (
            path.relative_to(root).as_posix() if root and path.is_relative_to(root) else str(path)
        )
        entries.append((name, file_sha256(path)))
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
