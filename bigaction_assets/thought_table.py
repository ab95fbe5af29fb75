"""Reading the `thoughts` table back (written by thoughts/, read by `episodes.reader`): whether a
dataset has one, and the thoughts it generated for some episodes' actions."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from bigaction_assets.lake import Lake, partition_exists, partition_url


def generated_thoughts(
    con: duckdb.DuckDBPyConnection, lake: Lake, key: str, episode_ids: Sequence[str]
) -> dict[tuple[str, int], str]:
    """`{(episode_id, idx): thought}` of the thoughts table of partition `key` generated for
    these episodes' actions (the reader gives each to an action with no recorded thought: a
    recorded thought is never replaced); the partition must exist (`has_thoughts`)."""
    if not episode_ids:
        return {}
    source = partition_url(lake, "thoughts", "thoughts", key).replace("'", "''")
    found = con.execute(
        f"""select episode_id, idx, thought from read_parquet('{source}')
        where status = 'generated' and episode_id in (select unnest(?))""",
        [list(episode_ids)],
    ).fetchall()
    return {(episode_id, idx): thought for episode_id, idx, thought in found}


def has_thoughts(lake: Lake, key: str) -> bool:
    """Whether the thoughts table has partition `key` (asked once per reading, not per batch:
    on an object store each look is a request)."""
    return partition_exists(lake, "thoughts", "thoughts", key)
