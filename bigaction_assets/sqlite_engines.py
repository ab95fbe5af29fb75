"""SQLAlchemy engines kept per SQLite file in a process, for Dagster's storage
(`instance_storage.py`): connections stay open and statements compiled, where Dagster's own
SQLite storage builds an engine for every read and write."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from sqlalchemy import Engine, event, exc
from sqlalchemy.engine import Connection

ENGINES_KEPT = 32
"""Engines held per process, one per database file; the least recently used beyond is closed.
A run's events have a file of their own, so a process that opens many runs would otherwise hold
a connection to each."""


def _file_identity(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


class EngineCache:
    """One SQLAlchemy engine per SQLite file in this process."""

    def __init__(self, size: int = ENGINES_KEPT) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._engines: OrderedDict[str, Engine] = OrderedDict()
        self._pid = os.getpid()
        self._left_by_parent: list[Engine] = []

    def engine(self, url: str) -> Engine:
        with self._lock:
            if os.getpid() != self._pid:  # forked: the parent's handles are not ours to touch
                self._left_by_parent.extend(self._engines.values())
                self._engines = OrderedDict()
                self._pid = os.getpid()
            engine = self._engines.pop(url, None) or self._new_engine(url)
            self._engines[url] = engine
            while len(self._engines) > self._size:
                _, oldest = self._engines.popitem(last=False)
                oldest.dispose()  # connections in use close when they are given back
            return engine

    def _new_engine(self, url: str) -> Engine:
        engine = create_engine(
            url,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
            pool_size=1,  # one thread at a time, mostly: the one connection kept
            max_overflow=8,  # the odd nested or concurrent use: closed after it
        )
        path = engine.url.database or ""

        def remember_file(_dbapi: Any, record: Any) -> None:
            record.info["file"] = _file_identity(path)

        def same_file_or_reconnect(_dbapi: Any, record: Any, _proxy: Any) -> None:
            if record.info.get("file") != _file_identity(path):
                raise exc.DisconnectionError(f"{path} was replaced or removed since it was opened")

        event.listen(engine, "connect", remember_file)
        event.listen(engine, "connect", _write_ahead_without_syncing_each_commit)
        event.listen(engine, "checkout", same_file_or_reconnect)
        return engine

    def dispose(self) -> None:
        with self._lock:
            for engine in self._engines.values():
                engine.dispose()
            self._engines.clear()


def _write_ahead_without_syncing_each_commit(dbapi_connection: Any, _record: Any) -> None:
    """WAL with `synchronous=normal`: a commit is written to the log but not synced to disk;
    the log is synced when it is checkpointed.

    Dagster puts its files in WAL mode, but only after creating a run's tables, and keeps
    SQLite's default `synchronous=full`, which syncs the log at every commit. `make demo` made
    ~9,400 syncs, most for the events its 34 runs log one commit each, ~1,700 with this. In
    WAL mode a crash of the machine can lose the last commits, never the file (SQLite's
    documentation); a killed process loses nothing. A file another process is still setting
    up is left to Dagster, which sets WAL itself."""
    with suppress(sqlite3.OperationalError):  # locked by a process creating it: Dagster sets it
        dbapi_connection.execute("pragma journal_mode = wal")
    dbapi_connection.execute("pragma synchronous = normal")


ENGINES = EngineCache()


@contextmanager
def transaction(url: str) -> Iterator[Connection]:
    with ENGINES.engine(url).connect() as conn, conn.begin():
        yield conn
