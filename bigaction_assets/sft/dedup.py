"""Exact duplicate detection over a whole partition, in memory that does not grow with it.

Every example's content digest must be remembered to drop later copies, whatever the size of
the partition. The first digests live in a set; past `in_memory` of them, the rest go to a
temporary SQLite table on disk (a B-tree keyed by the digest, with a small page cache), so
memory stays bounded however many examples a partition holds.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from types import TracebackType

IN_MEMORY = 200_000  # ~20 MB of digests in the set before the rest goes to disk


class SeenContent:
    """`seen.add(digest)` is True the first time a digest is added, False for a copy."""

    def __init__(self, in_memory: int = IN_MEMORY) -> None:
        self.in_memory = in_memory
        self._set: set[bytes] = set()
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._db: sqlite3.Connection | None = None

    def add(self, digest: bytes) -> bool:
        if digest in self._set:
            return False
        if self._db is None:
            if len(self._set) < self.in_memory:
                self._set.add(digest)
                return True
            self._db = self._open()
        inserted = self._db.execute("insert or ignore into seen values (?)", (digest,))
        return inserted.rowcount == 1

    def _open(self) -> sqlite3.Connection:
        self._folder = tempfile.TemporaryDirectory(prefix="bigaction-seen-")
        db = sqlite3.connect(Path(self._folder.name) / "seen.sqlite3")  # one open transaction
        # scratch data, rebuilt by a rerun: no journal, no fsync
        db.executescript(
            "pragma journal_mode = off; pragma synchronous = off; pragma cache_size = -8192;"
            "create table seen (digest blob primary key) without rowid;"
        )
        return db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None
        self._set.clear()

    def __enter__(self) -> SeenContent:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
