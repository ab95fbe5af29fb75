"""Properties of the benchmark snapshot, as DuckDB queries returning offenders (its repeated
steps: `episode_ids.repeated_keys`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from bigaction_assets.quality import _rows, relation

GROUP = "benchmark"


def misplaced_targets(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    """Steps posable in text whose choices hold no target or several; steps that are not whose
    choices hold one (a step lacking only its screenshot is posed in full)."""
    return _rows(
        con,
        f"""
        select episode_id, step, text_only_valid,
               len(list_intersect(candidate_ids, target_ids)) as targets_among_choices
        from {relation(lake, "benchmark_snapshot", GROUP, partition)}
        where len(list_intersect(candidate_ids, target_ids)) <> text_only_valid::int
        order by 1, 2 limit {limit}""",
    )
