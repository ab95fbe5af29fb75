"""Durable small-file writes: once `write_durably` returns, the file survives a crash whole."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that, once this returns, the file survives a crash."""
    created = [p for p in (path.parent, path.parent.parent) if not p.exists()]
    path.parent.mkdir(parents=True, exist_ok=True)
    for folder in reversed(created):  # a new day folder must itself be durable in its parent
        _fsync_dir(folder.parent)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
