"""Rows of partition file versions, remembered on this machine's disk.

A step reports its table's totals across every partition (`defs/metadata.py`) from the Parquet
footers. The in-process memo of `lake_rows.table_rows` spares a run of many partitions in one
process; in a cluster every run is a process of its own and starts with it empty, so each step
read every partition's footer again (on a store, 2-3 requests each: at 1,300 shards, ~3,000 a
table a step). Here the counts outlive the process, in one SQLite file per machine, by file
version (name, size, modification time: what a listing gives), and a step reads only the
footers of files new to the machine.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

FileVersion = tuple[str, int, int]  # name, size, modification time (ns)
SCHEMA = """
create table if not exists file_rows (
    name text not null, size integer not null, mtime_ns integer not null, rows integer not null,
    primary key (name, size, mtime_ns)
)"""
BUSY_TIMEOUT_MS = 30_000

log = logging.getLogger(__name__)


class RowCounts:
    """Row counts by file version in the SQLite file `path` (made when first written). Only a
    cache: a file it cannot use (damaged, on a full disk) is reported and read around, at the
    cost of reading the footers."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # the default rollback journal, not WAL: WAL needs memory shared between processes,
        # which a data folder on a network volume does not give
        con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
        con.execute(SCHEMA)
        return con

    def known(self, prefix: str) -> dict[FileVersion, int]:
        """Every remembered version of a file whose name starts with `prefix` (one table)."""
        if not self.path.exists():
            return {}
        try:
            with closing(self._connect()) as con:
                found = con.execute(
                    "select name, size, mtime_ns, rows from file_rows"
                    " where substr(name, 1, length(?)) = ?",
                    (prefix, prefix),
                ).fetchall()
        except sqlite3.Error as error:
            log.warning("footer row counts in %s unreadable, reading footers: %s", self.path, error)
            return {}
        return {(name, size, mtime): rows for name, size, mtime, rows in found}

    def remember(self, counted: dict[FileVersion, int], forget: Iterable[FileVersion]) -> None:
        """Store newly counted versions and drop `forget` (versions the table no longer has:
        rewritten or deleted files), in one transaction."""
        forget = list(forget)
        if not counted and not forget:
            return
        try:
            with closing(self._connect()) as con, con:  # one transaction
                con.executemany(
                    "insert or replace into file_rows values (?, ?, ?, ?)",
                    [(*version, rows) for version, rows in counted.items()],
                )
                con.executemany(
                    "delete from file_rows where name = ? and size = ? and mtime_ns = ?", forget
                )
        except (sqlite3.Error, OSError) as error:
            log.warning("footer row counts not kept in %s: %s", self.path, error)
