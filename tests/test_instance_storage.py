"""The embedded instance's storage keeps an engine per SQLite file: far fewer connections than
Dagster's own, the same files either storage reads, a replaced file opened again, a fresh start
after a fork."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.storage.sqlite_storage import DagsterSqliteStorage
from sqlalchemy import Engine, event, text

from bigaction_assets.dagster_home import SHIPPED
from bigaction_assets.instance_storage import (
    RUN_FILE_TEMPLATE,
    KeptEngineEventLogStorage,
    KeptEngineSqliteStorage,
    _remove_if_made_here,
    kept_engine_instance,
)
from bigaction_assets.sqlite_engines import EngineCache


@dg.asset(check_specs=[dg.AssetCheckSpec("has_rows", asset="numbers")])
def numbers() -> dg.MaterializeResult:
    return dg.MaterializeResult(
        metadata={"rows": 3}, check_results=[dg.AssetCheckResult(passed=True)]
    )


def instance_on(home: Path, storage: type[DagsterSqliteStorage]) -> dg.DagsterInstance:
    (home / "dagster.yaml").write_text(
        yaml.safe_dump(
            {
                "telemetry": {"enabled": False},
                "storage": {
                    "custom": {
                        "module": storage.__module__,
                        "class": storage.__name__,
                        "config": {"base_dir": str(home)},
                    }
                },
            }
        )
    )
    return dg.DagsterInstance.from_config(str(home))


def connections_opened(home: Path, storage: type[DagsterSqliteStorage], runs: int) -> int:
    opened: list[object] = []

    def count(dbapi_connection: object, _record: object) -> None:
        opened.append(dbapi_connection)

    with instance_on(home, storage) as instance:
        event.listen(Engine, "connect", count)
        try:
            for _ in range(runs):
                assert dg.materialize([numbers], instance=instance).success
        finally:
            event.remove(Engine, "connect", count)
    return len(opened)


def test_runs_open_a_few_connections_where_dagsters_storage_opens_one_a_query(tmp_path) -> None:
    (tmp_path / "kept").mkdir()
    (tmp_path / "dagster").mkdir()
    kept = connections_opened(tmp_path / "kept", KeptEngineSqliteStorage, runs=4)
    theirs = connections_opened(tmp_path / "dagster", DagsterSqliteStorage, runs=4)
    # a run's events have a file of their own, made and opened by the run: a few connections a
    # run (5 here), not one for every event and query (Dagster's: ~55)
    assert kept <= 4 * 6, kept
    assert theirs > 5 * kept, (kept, theirs)


def test_either_storage_reads_what_the_other_wrote(tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with instance_on(home, KeptEngineSqliteStorage) as instance:
        assert type(instance.run_storage).__name__ == "KeptEngineRunStorage"
        dg.materialize([numbers], instance=instance)
    with instance_on(home, DagsterSqliteStorage) as instance:
        assert len(instance.get_runs()) == 1
        dg.materialize([numbers], instance=instance)
    with instance_on(home, KeptEngineSqliteStorage) as instance:
        assert len(instance.get_runs()) == 2
        records = instance.fetch_materializations(dg.AssetKey("numbers"), limit=10).records
        assert [r.asset_materialization.metadata["rows"].value for r in records] == [3, 3]
        check = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey("numbers"), "has_rows")]
        )
        assert len(check) == 1


def write_table(path: Path, value: str) -> None:
    with sqlite3.connect(path) as con:
        con.execute("create table t (v text)")
        con.execute("insert into t values (?)", (value,))


def test_a_file_replaced_under_a_held_connection_is_opened_again(tmp_path) -> None:
    engines = EngineCache()
    path = tmp_path / "runs.db"
    write_table(path, "before")
    url = f"sqlite:///{path}"
    with engines.engine(url).connect() as conn:
        assert conn.execute(text("select v from t")).scalar() == "before"
    replacement = tmp_path / "new.db"
    write_table(replacement, "after")
    os.replace(replacement, path)  # as a data folder wiped and rebuilt while `make ui` runs
    with engines.engine(url).connect() as conn:
        assert conn.execute(text("select v from t")).scalar() == "after"
    engines.dispose()


def test_the_least_recently_used_engine_goes_beyond_the_limit(tmp_path) -> None:
    engines = EngineCache(size=2)
    urls = [f"sqlite:///{tmp_path / name}.db" for name in "abc"]
    a, b = engines.engine(urls[0]), engines.engine(urls[1])
    assert engines.engine(urls[0]) is a  # a is now the most recently used
    engines.engine(urls[2])
    assert engines.engine(urls[0]) is a and engines.engine(urls[1]) is not b
    engines.dispose()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_builds_its_own_engines(tmp_path) -> None:
    engines = EngineCache()
    url = f"sqlite:///{tmp_path / 'x.db'}"
    parent = engines.engine(url)
    with parent.connect() as conn:
        conn.execute(text("create table t (v int)"))
        conn.commit()
    pid = os.fork()
    if pid == 0:  # the child: a new engine, and the parent's left open
        child = engines.engine(url)
        ok = child is not parent and parent.pool.checkedin() == 1
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with parent.connect() as conn:  # the parent's connection still works
        assert conn.execute(text("select count(*) from t")).scalar() == 0
    engines.dispose()


def test_the_demo_opens_a_default_home_with_kept_engines_and_leaves_other_storage(
    tmp_path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(SHIPPED, home / "dagster.yaml")  # what `make demo` puts there
    with kept_engine_instance(home) as instance:
        assert type(instance.event_log_storage).__name__ == "KeptEngineEventLogStorage"
        assert dg.materialize([numbers], instance=instance).success
    assert (home / "history" / "runs.db").is_file()  # where Dagster's own storage keeps them
    with dg.DagsterInstance.from_config(str(home)) as instance:  # as `make ui` opens it
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert len(instance.get_runs()) == 1

    other = tmp_path / "other"
    other.mkdir()
    (other / "dagster.yaml").write_text(
        yaml.safe_dump(
            {
                "run_storage": {
                    "module": "dagster._core.storage.runs",
                    "class": "SqliteRunStorage",
                    "config": {"base_dir": str(other)},
                }
            }
        )
    )  # fmt: skip: a storage of the user's choosing (here: Dagster's older, one per kind)
    with kept_engine_instance(other) as instance:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"


WRITER = """
import sys
from pathlib import Path
import dagster as dg
from bigaction_assets.instance_storage import kept_engine_instance

@dg.asset
def numbers() -> None: ...

with kept_engine_instance(Path(sys.argv[1])) as instance:
    for _ in range(int(sys.argv[2])):
        assert dg.materialize([numbers], instance=instance).success
"""


def test_two_processes_write_one_home_at_once_and_lose_no_run(tmp_path) -> None:
    """`make demo` beside `make ui`'s processes: each holds its connections, none locks the
    others out (Dagster's own storage reads what both wrote)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(SHIPPED, home / "dagster.yaml")
    with kept_engine_instance(home):  # the files made once, as `make demo` does before its runs
        pass
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(home), "6"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for _ in range(2)
    ]  # fmt: skip
    outputs = [writer.communicate(timeout=240)[0].decode() for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0], outputs[0][-2000:]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 12
        assert all(run.status == dg.DagsterRunStatus.SUCCESS for run in runs)
        assert len(instance.fetch_materializations(dg.AssetKey("numbers"), limit=20).records) == 12


def test_kept_engines_write_ahead_and_sync_at_checkpoints_not_commits(tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with instance_on(home, KeptEngineSqliteStorage) as instance:
        run_id = dg.materialize([numbers], instance=instance).run_id
        storage = instance.event_log_storage
        for shard in (run_id, "index"):  # a run's own file, made by the run, and the index
            with storage._connect(shard) as conn:
                assert conn.execute(text("pragma journal_mode")).scalar() == "wal", shard
                assert conn.execute(text("pragma synchronous")).scalar() == 1, shard  # normal
        with instance.run_storage.connect() as conn:
            assert conn.execute(text("pragma synchronous")).scalar() == 1
    with (
        instance_on(tmp_path / "home", DagsterSqliteStorage) as instance,  # Dagster's own
        instance.event_log_storage._connect(run_id) as conn,
    ):
        assert conn.execute(text("pragma synchronous")).scalar() == 2  # full


def tables_and_revision(path: Path) -> tuple[list[tuple], list[tuple]]:
    with sqlite3.connect(path) as con:
        tables = con.execute("select type, name, sql from sqlite_master order by name").fetchall()
        return tables, con.execute("select version_num from alembic_version").fetchall()


def test_a_new_runs_file_is_a_copy_of_one_dagster_made_and_reads_the_same(
    tmp_path, monkeypatch
) -> None:
    kept_home, dagster_home = tmp_path / "kept", tmp_path / "dagster"
    kept_home.mkdir()
    dagster_home.mkdir()
    initdb_shards: list[str] = []
    initdb = KeptEngineEventLogStorage._initdb

    def counted(self, engine, for_index_shard=False):
        initdb_shards.append(str(engine.url.database))
        return initdb(self, engine, for_index_shard)

    monkeypatch.setattr(KeptEngineEventLogStorage, "_initdb", counted)
    with instance_on(kept_home, KeptEngineSqliteStorage) as instance:
        runs = [dg.materialize([numbers], instance=instance).run_id for _ in range(3)]
        kept_file = Path(instance.event_log_storage.path_for_shard(runs[0]))
    # the index once, the template once; no run's own file went through _initdb
    assert not any(run in shard for shard in initdb_shards for run in runs), initdb_shards
    assert len(initdb_shards) <= 2, initdb_shards
    with instance_on(dagster_home, DagsterSqliteStorage) as instance:
        theirs = dg.materialize([numbers], instance=instance).run_id
        their_file = Path(instance.event_log_storage.path_for_shard(theirs))
    assert tables_and_revision(kept_file) == tables_and_revision(their_file)
    with instance_on(kept_home, DagsterSqliteStorage) as instance:  # Dagster reads the copies
        for run in runs:
            events = instance.all_logs(run)
            assert any(e.dagster_event and e.dagster_event.is_step_materialization for e in events)


def test_a_runs_file_already_there_is_left_to_dagster(tmp_path) -> None:
    storage = KeptEngineEventLogStorage(str(tmp_path))
    existing = Path(storage.path_for_shard("made-elsewhere"))
    existing.write_bytes(b"")
    assert not RUN_FILE_TEMPLATE.copy_to(storage, "made-elsewhere")
    assert existing.read_bytes() == b""
    assert RUN_FILE_TEMPLATE.copy_to(storage, "new-run")
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_dynamic_partition_lookups_open_no_file_and_answer_as_dagsters(tmp_path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    opened: list[object] = []

    def count(dbapi_connection: object, _record: object) -> None:
        opened.append(dbapi_connection)

    with instance_on(home, KeptEngineSqliteStorage) as instance:
        instance.add_dynamic_partitions("datasets", ["adp.synatra"])
        storage = instance.event_log_storage
        assert storage.has_table("dynamic_partitions")
        assert not storage.has_table("no_such_table")
        event.listen(Engine, "connect", count)
        try:
            for _ in range(20):  # Dagster's storage opens the index file for each of these
                assert instance.has_dynamic_partition("datasets", "adp.synatra")
                assert not instance.has_dynamic_partition("datasets", "adp.nnetnav")
        finally:
            event.remove(Engine, "connect", count)
        assert opened == []
    with instance_on(home, DagsterSqliteStorage) as instance:
        storage = instance.event_log_storage
        assert storage.has_table("dynamic_partitions")
        assert not storage.has_table("no_such_table")
        assert instance.has_dynamic_partition("datasets", "adp.synatra")
        assert not instance.has_dynamic_partition("datasets", "adp.nnetnav")


def test_where_no_copy_can_be_made_the_run_file_is_left_to_dagster(tmp_path, monkeypatch) -> None:
    storage = KeptEngineEventLogStorage(str(tmp_path))

    def no_hard_links(_source: object, _target: object) -> None:
        raise PermissionError("this volume has no hard links")

    monkeypatch.setattr(os, "link", no_hard_links)
    assert not RUN_FILE_TEMPLATE.copy_to(storage, "on-such-a-volume")
    left = [p.name for p in tmp_path.iterdir() if not p.name.startswith("index.db")]
    assert left == []  # neither the run's file nor a partial copy
    with storage._connect("on-such-a-volume") as conn:  # Dagster's _initdb makes it instead
        assert conn.execute(text("select count(*) from event_logs")).scalar() == 0


def test_the_template_folder_is_removed_by_its_own_process_only(tmp_path) -> None:
    folder = tmp_path / "template"
    folder.mkdir()
    _remove_if_made_here(folder, os.getpid() + 1)  # a forked child running its parent's handler
    assert folder.exists()
    _remove_if_made_here(folder, os.getpid())
    assert not folder.exists()
