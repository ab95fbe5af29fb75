"""Table-wide invariants of the thoughts table, as DuckDB queries (empty list: it holds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from bigaction_assets.quality import has_table, relation

GROUP = "thoughts"


def thoughts_without_their_action(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    """Rows whose event is not an agent action lacking a recorded thought (stale rows)."""
    if not has_table(lake, "thoughts", GROUP, partition):
        return []
    cursor = con.execute(
        f"""
        select t.episode_id, t.idx, ev.kind, ev.description is not null as recorded
        from {relation(lake, "thoughts", GROUP, partition)} t
        left join {relation(lake, "events", partition=partition)} ev using (episode_id, idx)
        where ev.kind is null
           or ev.kind not in ('api_action', 'code_action', 'message_action')
           or ev.actor <> 'agent'
           or coalesce(trim(ev.description), '') <> ''
        order by 1, 2 limit {limit}"""
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
