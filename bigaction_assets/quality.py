"""Table-wide invariants of the standardized lake, as DuckDB queries over its Parquet files.

Each function returns the offending rows (at most `limit`), so an empty list means the property
holds; asset checks turn them into pass/fail with the offenders as metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from bigaction_assets.episode_ids import repeated_episode_ids
from bigaction_assets.lake import Lake, partition_exists, partition_url, table_dir
from bigaction_assets.lake_reader import table_files
from bigaction_assets.lake_rows import file_rows
from bigaction_assets.row_counts import RowCounts
from bigaction_assets.schemas.standardized import EVENT_ACTORS, EVENT_KINDS

GROUP = "standardized"


def has_table(lake: Lake, asset: str, group: str = GROUP, partition: str | None = None) -> bool:
    """Whether the table has any partition (or, given one, that partition)."""
    if partition is not None:
        return partition_exists(lake, group, asset, partition)
    if isinstance(lake, Path):
        return any(table_dir(lake, group, asset).glob("*.parquet"))
    return bool(table_files(lake, group, asset))


def relation(lake: Lake, asset: str, group: str = GROUP, partition: str | None = None) -> str:
    """SQL for all partitions of a table, or for the one named `partition` (a check of one
    partition reads one file, not the whole table: on an object store every file is requests).
    On an object-store lake the connection must read its URLs
    (`lake_sql.query_connection(lake)`)."""
    if partition is not None:
        glob = partition_url(lake, group, asset, partition)
    elif isinstance(lake, Path):
        glob = (table_dir(lake, group, asset) / "*.parquet").as_posix()
    else:
        glob = f"{lake.url(lake.key(group, asset))}/*.parquet"
    quoted = glob.replace("'", "''")
    return f"read_parquet('{quoted}', union_by_name = true)"


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def duplicate_episode_ids(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20
) -> list[dict[str, Any]]:
    """Episode ids in `episodes` more than once, across every partition. Not a query like the
    others (`con` is not used): a group-by over every id outgrows the query memory at ~600,000
    episodes; `episode_ids.repeated_episode_ids` sorts 64-bit hashes instead."""
    offenders, _ = repeated_episode_ids(lake, limit=limit)
    return offenders


def orphan_events(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    return _rows(
        con,
        f"""
        select distinct ev.episode_id from {relation(lake, "events", partition=partition)} ev
        anti join {relation(lake, "episodes", partition=partition)} ep using (episode_id)
        order by 1 limit {limit}""",
    )


def noncontiguous_episodes(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    """Episodes whose event idx are not exactly 0..n-1, or whose n differs from num_events."""
    return _rows(
        con,
        f"""
        with counted as (
            select episode_id, count(*) as n, count(distinct idx) as distinct_idx,
                   min(idx) as first_idx, max(idx) as last_idx
            from {relation(lake, "events", partition=partition)} group by episode_id)
        select ep.episode_id, ep.num_events, c.n, c.first_idx, c.last_idx
        from {relation(lake, "episodes", partition=partition)} ep
        left join counted c using (episode_id)
        where coalesce(c.n, 0) <> ep.num_events
           or (c.n > 0 and (c.first_idx <> 0 or c.last_idx <> c.n - 1 or c.distinct_idx <> c.n))
        order by 1 limit {limit}""",
    )


def unresolved_html_shas(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    pages = (
        f"(select html_sha from {relation(lake, 'dom_snapshots', partition=partition)})"
        if has_table(lake, "dom_snapshots", partition=partition)
        else "(select null::varchar as html_sha where false)"
    )
    return _rows(
        con,
        f"""
        select ev.episode_id, ev.idx, ev.html_sha
        from {relation(lake, "events", partition=partition)} ev
        where ev.html_sha is not null and ev.html_sha not in {pages}
        order by 1, 2 limit {limit}""",
    )


def unknown_kinds_or_actors(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    kinds = ", ".join(f"'{k}'" for k in EVENT_KINDS)
    actors = ", ".join(f"'{a}'" for a in EVENT_ACTORS)
    return _rows(
        con,
        f"""
        select kind, actor, count(*) as events from {relation(lake, "events", partition=partition)}
        where kind not in ({kinds}) or actor not in ({actors}) or kind is null or actor is null
        group by all order by 1, 2 limit {limit}""",
    )


def reject_rates(
    lake: Lake, partitions: list[str] | None = None, remembered: RowCounts | None = None
) -> list[dict[str, Any]]:
    """Per dataset: episodes kept, records rejected and the rejected share of all records. No
    row is read: every table's `dataset` is its partition key, so a dataset's episodes kept and
    records rejected are the rows of its two partition files, read
    from their footers (each once per file version on this machine, given `remembered`).
    `partitions`: those datasets only (all by default)."""
    kept, rejected = (
        {_partition_of(file): rows for file, rows in file_rows(lake, GROUP, table, remembered)}
        for table in ("episodes", "rejects")
    )
    rates = []
    for dataset in sorted(kept.keys() | rejected.keys()):
        counts = kept.get(dataset, 0), rejected.get(dataset, 0)
        if (partitions is not None and dataset not in partitions) or not sum(counts):
            continue
        rates.append({"dataset": dataset, "kept": counts[0], "rejected": counts[1],
                      "reject_rate": counts[1] / sum(counts)})  # fmt: skip
    return rates


def _partition_of(file: Path | str) -> str:
    return str(file).rsplit("/", 1)[-1].removesuffix(".parquet")


def episodes_in_several_splits(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    """Episodes whose SFT windows landed in more than one split."""
    return _rows(
        con,
        f"""
        select episode_id, list(distinct split order by split) as splits
        from {relation(lake, "sft_examples", "sft", partition)}
        group by episode_id having count(distinct split) > 1 order by 1 limit {limit}""",
    )
