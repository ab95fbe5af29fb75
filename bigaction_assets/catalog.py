"""The DuckDB catalog: one view per lake table over all its partition files, local or s3://."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from bigaction_assets.lake import Lake, local_root
from bigaction_assets.lake_sql import register
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.rerun.fingerprint import stat_key


def lake_tables(lake: Lake) -> dict[str, Path | str]:
    """Every table that has at least one partition file, by asset name: its folder, or on an
    object store the URL of its prefix."""
    folder = local_root(lake)
    if folder is None:
        assert isinstance(lake, LakeRoot)
        return {
            asset: lake.url(lake.key(group, asset))
            for group in lake.list_dirs()
            for asset in lake.list_dirs(group)
            if lake.list_parquet(group, asset)
        }
    tables: dict[str, Path | str] = {}
    if not folder.exists():
        return tables
    for group_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for asset_dir in sorted(p for p in group_dir.iterdir() if p.is_dir()):
            if any(asset_dir.glob("*.parquet")):
                tables[asset_dir.name] = asset_dir
    return tables


def _files_sql(directory: Path | str) -> str:
    glob = (
        (directory / "*.parquet").as_posix()
        if isinstance(directory, Path)
        else f"{directory}/*.parquet"
    )
    quoted = glob.replace("'", "''")
    return f"read_parquet('{quoted}'"


def _view_sql(directory: Path | str) -> str:
    return f"select * from {_files_sql(directory)}, union_by_name = true)"


# Catalogs this process found or made current: the file's stat key then, and its views' files.
_known_current: dict[Path, tuple[tuple[int, int, int, int], frozenset[tuple[str, str]]]] = {}


def _identity(catalog: Path) -> tuple[int, int, int, int] | None:
    try:
        return stat_key(catalog)
    except FileNotFoundError:
        return None


def _views_wanted(tables: dict[str, Path | str]) -> frozenset[tuple[str, str]]:
    return frozenset((name, _files_sql(directory)) for name, directory in tables.items())


def _remember_current(catalog: Path, tables: dict[str, Path | str]) -> None:
    identity = _identity(catalog)
    if identity is not None:
        _known_current[catalog] = (identity, _views_wanted(tables))


def catalog_is_current(catalog: Path, tables: dict[str, Path | str]) -> bool:
    """Whether the catalog already holds exactly one view per table, over its files: then a
    refresh would change nothing but the file's bytes and mtime, so it is skipped.

    A catalog this process found or made current is not opened again while its file keeps its
    stat key (size, mtime, ctime, inode): each step of a run asks, and an open costs ~24 ms."""
    identity = _identity(catalog)
    if identity is None:
        return False
    if _known_current.get(catalog) == (identity, _views_wanted(tables)):
        return True
    try:
        with duckdb.connect(str(catalog), read_only=True) as con:
            views = dict(
                con.execute(
                    "select view_name, sql from duckdb_views() where not internal"
                ).fetchall()
            )
    except duckdb.Error:  # locked by a writer, or not a catalog: refresh it the usual way
        return False
    # DuckDB keeps a normalized text of each view: compare the files it reads, not the text
    current = set(views) == set(tables) and all(
        _files_sql(directory) in views[name] for name, directory in tables.items()
    )
    if current:
        _remember_current(catalog, tables)
    return current


def refresh_catalog(lake: Lake, catalog: Path, attempts: int = 20) -> list[str]:
    """(Re)create one DuckDB view per lake table over all its partition files.

    DuckDB lets one process write a database file at a time; when another process (the UI, a
    user's shell) holds it, we wait briefly and try again rather than fail the materialization.
    """
    tables = lake_tables(lake)
    if catalog_is_current(catalog, tables):
        return sorted(tables)
    catalog.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(attempts):
        try:
            with duckdb.connect(str(catalog)) as con:
                register(con, lake)  # a view reads its files' schema as it is created
                for name, directory in tables.items():
                    con.execute(f'create or replace view "{name}" as {_view_sql(directory)}')
            _remember_current(catalog, tables)
            return sorted(tables)
        except duckdb.IOException:
            if attempt == attempts - 1:
                raise
            time.sleep(0.25)
    return sorted(tables)
