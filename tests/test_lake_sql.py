"""DuckDB connections over a local lake: cursors on one database per process, and the catalog
check that does not open a catalog it knows to be current."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import catalog as catalog_module
from bigaction_assets.catalog import catalog_is_current, lake_tables, refresh_catalog
from bigaction_assets.lake_sql import QUERY_MEMORY_LIMIT, query_connection


def write_table(lake: Path, group: str, asset: str, partition: str, rows: int) -> None:
    folder = lake / group / asset
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"n": list(range(rows))}), folder / f"{partition}.parquet")


def test_connections_read_the_lake_with_the_memory_limit_and_keep_their_own_temporary_views(
    tmp_path: Path,
) -> None:
    write_table(tmp_path, "g", "alpha", "p1", 3)
    limit_mib = int(QUERY_MEMORY_LIMIT.removesuffix("MB")) * 10**6 / 2**20
    with query_connection(tmp_path) as first, query_connection(tmp_path) as second:
        glob = (tmp_path / "g" / "alpha" / "*.parquet").as_posix()
        first.execute(f"create temporary view mine as select * from read_parquet('{glob}')")
        assert first.execute("select count(*) from mine").fetchone() == (3,)
        with pytest.raises(duckdb.CatalogException):
            second.execute("select count(*) from mine")
        setting = second.execute("select current_setting('memory_limit')").fetchone()
        assert setting is not None
        assert float(setting[0].split()[0]) == pytest.approx(limit_mib, rel=0.01)
        cache = second.execute("select current_setting('enable_external_file_cache')").fetchone()
        assert cache == (False,)


def test_a_partition_replaced_between_queries_is_read_anew(tmp_path: Path) -> None:
    """The database outlives each query: nothing of a file read before may stand in for it."""
    write_table(tmp_path, "g", "alpha", "p1", 3)
    glob = (tmp_path / "g" / "alpha" / "*.parquet").as_posix()
    count = f"select count(*), max(n) from read_parquet('{glob}')"
    with query_connection(tmp_path) as con:
        assert con.execute(count).fetchone() == (3, 2)
    replacement = tmp_path / "replacement.parquet"  # a partition rewritten as the lake does it
    pq.write_table(pa.table({"n": [10, 11, 12, 13, 14]}), replacement)
    os.replace(replacement, tmp_path / "g" / "alpha" / "p1.parquet")
    write_table(tmp_path, "g", "alpha", "p2", 1)
    with query_connection(tmp_path) as con:
        assert con.execute(count).fetchone() == (6, 14)


def test_a_forked_child_queries_with_a_database_of_its_own(tmp_path: Path) -> None:
    write_table(tmp_path, "g", "alpha", "p1", 5)
    glob = (tmp_path / "g" / "alpha" / "*.parquet").as_posix()
    parent = query_connection(tmp_path)  # the parent's database exists before the fork,
    parent.execute("create table made_by_the_parent as select 1 as n")  # marked by a table
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            with query_connection(tmp_path) as con:
                row = con.execute(f"select count(*) from read_parquet('{glob}')").fetchone()
                tables = con.execute("select table_name from duckdb_tables()").fetchall()
                code = 0 if row == (5,) and not tables else 2
        finally:
            os._exit(code)
    parent.execute("drop table made_by_the_parent")
    parent.close()
    deadline = time.monotonic() + 30  # a child stuck on the parent's database would hang
    while (finished := os.waitpid(child, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            pytest.fail("the forked child did not finish its query within 30 s")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(finished[1]) == 0


def test_a_catalog_made_current_here_is_not_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake, catalog = tmp_path / "lake", tmp_path / "catalog.duckdb"
    write_table(lake, "g", "alpha", "p1", 2)
    assert refresh_catalog(lake, catalog) == ["alpha"]

    def no_open(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the catalog was opened again")

    monkeypatch.setattr(catalog_module.duckdb, "connect", no_open)
    assert catalog_is_current(catalog, lake_tables(lake))
    assert refresh_catalog(lake, catalog) == ["alpha"]
    monkeypatch.undo()
    write_table(lake, "g", "beta", "p1", 1)  # a new table: looked at again, and not current
    assert not catalog_is_current(catalog, lake_tables(lake))


def test_a_catalog_rewritten_by_someone_else_is_read_again(tmp_path: Path) -> None:
    lake, catalog = tmp_path / "lake", tmp_path / "catalog.duckdb"
    write_table(lake, "g", "alpha", "p1", 2)
    write_table(lake, "g", "beta", "p1", 2)
    refresh_catalog(lake, catalog)
    assert catalog_is_current(catalog, lake_tables(lake))
    with duckdb.connect(str(catalog)) as con:  # another process drops a view
        con.execute('drop view "beta"')
    assert not catalog_is_current(catalog, lake_tables(lake))
    refresh_catalog(lake, catalog)
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert con.execute('select count(*) from "beta"').fetchone() == (2,)
    assert catalog_is_current(catalog, lake_tables(lake))
