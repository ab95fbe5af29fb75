"""The durable LLM call cache: one SQLite file, one row per (model, prompt, parameters).

Every finished call is committed at once, in its own transaction, so a run killed at any moment
loses only the calls in flight. WAL journaling lets readers (another partition's run, a user's
shell) read while one connection writes; with `synchronous=NORMAL` a commit survives the
process being killed (SIGKILL), and only a power cut may lose the last commits — which then
cost their calls again, never a wrong row. A failure is stored as a failure with its reason,
never as an output, and counts the runs it failed in, so later runs retry it a bounded number
of times. Prompts are built from people's data: each call records the subjects (episode ids)
its prompt came from, so erasure can remove them (`erase_subjects`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bigaction_assets.llm.cache_sql import CachedCall, CallKey, Spend, SqlCallCache, schema

__all__ = ["CacheLocation", "CachedCall", "CallCache", "CallKey", "Spend", "open_cache"]

SCHEMA = schema(table_options=" without rowid")  # SQLite: a table is its primary key


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the cache at `path` (created with its tables when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    con.execute("pragma journal_mode = wal")
    con.execute("pragma synchronous = normal")
    con.execute("pragma busy_timeout = 60000")
    con.executescript(SCHEMA)
    return con


class CallCache(SqlCallCache):
    """The cache in one SQLite file, through one connection."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con = connect(path)

    def _fetch(self, sql: str, values: Iterable[Any]) -> list[tuple]:
        return self.con.execute(sql, tuple(values)).fetchall()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Cursor]:
        with Transaction(self.con):
            yield self.con.cursor()


class Transaction:
    """`begin immediate` ... `commit`: the write lock is taken up front, so a busy database is
    waited for (busy_timeout) rather than failing half-way."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("begin immediate")

    def __exit__(self, kind: type[BaseException] | None, *_rest: object) -> None:
        self.con.execute("commit" if kind is None else "rollback")


CacheLocation = Path | str
"""Where the cache is: a SQLite file (the default), or a PostgreSQL URL every worker shares."""


def open_cache(location: CacheLocation) -> SqlCallCache:
    """The cache at `location`: SQLite for a path, PostgreSQL (cache_postgres.py) for a URL."""
    from bigaction_assets.llm.cache_postgres import PostgresCallCache, is_postgres_url

    if is_postgres_url(location):
        return PostgresCallCache(str(location))
    return CallCache(Path(location))
