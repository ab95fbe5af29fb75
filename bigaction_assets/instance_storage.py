"""`make demo`'s Dagster instance: Dagster's SQLite storage, its engines kept.

Dagster's SQLite storages build a new SQLAlchemy engine for every read and write (NullPool):
connect, compile the statement again (the compiled-statement cache is the engine's), commit,
dispose. Each event a run logs goes through that once or twice, and `make demo` logs ~5,000
(33 runs): half of its 65 s went to it (benchmarks/README.md, "`make demo` itself"). Here each
process keeps one engine per database file, so connections stay open and statements compiled.

`kept_engine_instance` opens a Dagster home with it when the home uses Dagster's default SQLite
storage, and as configured otherwise. Nothing in the home changes: the same files, tables and
locking, read by `make ui`'s processes (Dagster's own storage) and written by the demo at once.
Not in dagster.yaml: a storage configured there needs its folder spelled out or taken from
DAGSTER_HOME, and `DagsterInstance.from_config(folder)` without DAGSTER_HOME then fails.

Ours, beyond keeping engines:

- In `sqlite_engines.py`: a held connection is checked before each use (if its file was replaced
  or removed, a data folder wiped while `make ui` runs, the file is opened again rather than
  written on unlinked); a forked child starts with no engines and leaves the parent's alone;
  every connection writes ahead (WAL) and syncs the log at checkpoints, not at every commit.
- A new run's event file is a copy of an empty one Dagster made (`RunFileTemplate`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.sqlite.sqlite_event_log import (
    INDEX_SHARD_NAME,
    SqliteEventLogStorage,
)
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy.engine import Connection

from bigaction_assets.sqlite_engines import ENGINES, transaction

DAGSTER_SQLITE_STORAGE = ("dagster._core.storage.sqlite_storage", "DagsterSqliteStorage")


class KeptEngineRunStorage(SqliteRunStorage):
    """Dagster's SQLite run storage on this process's engine for its file."""

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with transaction(self._conn_string) as conn:
            yield conn


class KeptEngineScheduleStorage(SqliteScheduleStorage):
    """Dagster's SQLite schedule storage on this process's engine for its file."""

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        with transaction(self._conn_string) as conn:
            yield conn


class RunFileTemplate:
    """An empty run event file as Dagster's `_initdb` makes it, made once per process and
    copied for each new run: `_initdb` creates the tables and stamps the schema revision
    (~70 ms a run, each statement its own commit), a copy takes well under a millisecond."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._path: Path | None = None

    def copy_to(self, storage: SqliteEventLogStorage, shard: str) -> bool:
        """Put a copy at `shard`'s path unless a file is there already (then False: someone
        else made it, and Dagster's `_initdb` checks it). The copy appears whole or not at all.
        It is only a shortcut: where it cannot be made (no hard links on the volume, the template
        gone) it is False too, and `_initdb` makes the file as Dagster would."""
        final = Path(storage.path_for_shard(shard))
        if final.exists():
            return False
        template = self._template(storage)
        partial = final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")  # not *.db: not a shard
        try:
            shutil.copyfile(template, partial)
            os.link(partial, final)  # FileExistsError if the file appeared meanwhile
        except OSError:
            return False
        finally:
            partial.unlink(missing_ok=True)
        return True

    def _template(self, storage: SqliteEventLogStorage) -> Path:
        if self._path is None or os.getpid() != self._pid or not self._path.exists():
            folder = Path(tempfile.mkdtemp(prefix="bigaction-run-events-"))
            path = folder / "template.db"
            engine = create_engine(f"sqlite:///{path}")
            try:
                storage._initdb(engine)
                with engine.connect() as conn:  # the tables into the file itself, not its log
                    conn.exec_driver_sql("pragma wal_checkpoint(truncate)")
            finally:
                engine.dispose()
            self._path, self._pid = path, os.getpid()
            atexit.register(_remove_if_made_here, folder, os.getpid())
        return self._path


def _remove_if_made_here(folder: Path, pid: int) -> None:
    """At exit, the template's folder, by the process that made it only: a forked child that
    exits normally runs its parent's exit handlers too."""
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


RUN_FILE_TEMPLATE = RunFileTemplate()


class KeptEngineEventLogStorage(SqliteEventLogStorage):
    """Dagster's SQLite event log (a file per run and an index) on this process's engines; a new
    run's file is a copy of an empty one (`RunFileTemplate`)."""

    @contextmanager
    def _connect(self, shard: str) -> Iterator[Connection]:  # type: ignore[override]
        with self._db_lock:  # as Dagster's: one thread at a time, the watcher's included
            url = self.conn_string_for_shard(shard)
            if shard not in self._initialized_dbs:
                if shard == INDEX_SHARD_NAME or not RUN_FILE_TEMPLATE.copy_to(self, shard):
                    self._initdb(ENGINES.engine(url))
                self._initialized_dbs.add(shard)
            with transaction(url) as conn:
                yield conn

    def has_table(self, table_name: str) -> bool:
        """As Dagster's, on this process's engine for the index file: Dagster's builds an engine
        and opens the file for each call, and guards every dynamic-partition lookup with one."""
        engine = ENGINES.engine(self.conn_string_for_shard(INDEX_SHARD_NAME))
        with engine.connect() as conn:
            return bool(engine.dialect.has_table(conn, table_name))


class KeptEngineSqliteStorage(DagsterSqliteStorage):
    """Dagster's default storage (the same files under `base_dir`), engines kept."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        self.base_dir = base_dir
        self._run_storage = KeptEngineRunStorage.from_local(_runs_directory(base_dir))
        self._event_log_storage = KeptEngineEventLogStorage(_event_logs_directory(base_dir))
        self._schedule_storage = KeptEngineScheduleStorage.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> KeptEngineSqliteStorage:
        return cls.from_local(inst_data=inst_data, **config_value)


def kept_engine_instance(home: Path) -> dg.DagsterInstance:
    """The Dagster instance of `home`, on `KeptEngineSqliteStorage` if it is on Dagster's SQLite
    storage (the default), and as its dagster.yaml says otherwise (PostgreSQL, say)."""
    ref = InstanceRef.from_dir(str(home))
    data = ref.storage_data
    if data is not None and (data.module_name, data.class_name) == DAGSTER_SQLITE_STORAGE:
        kept = ConfigurableClassData(__name__, KeptEngineSqliteStorage.__name__, data.config_yaml)
        ref = ref._replace(storage_data=kept)
    return dg.DagsterInstance.from_ref(ref)
