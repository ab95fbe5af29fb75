"""What `make demo` prints when it is done: rows per table, rejects by reason, unread landing
files, the thoughts stage, the leaderboard, and where to look next."""

from __future__ import annotations

import os

import duckdb

from bigaction_assets.lake import Lake
from bigaction_assets.lake_sql import register
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.rerun.inputs import LLM_SETTINGS
from bigaction_assets.settings import Paths

LLM_MODEL_ENV = LLM_SETTINGS[0]


def thoughts_line(con: duckdb.DuckDBPyConnection, views: list[str]) -> str:
    """What the thoughts stage did: how many agent actions lack a recorded thought, and how
    many thoughts a model wrote (none without one: say how to set one up)."""
    missing = con.execute(
        """select count(*) from events where kind in ('api_action', 'code_action',
        'message_action') and actor = 'agent' and coalesce(trim(description), '') = ''"""
    ).fetchone()[0]
    generated = 0
    if "thoughts" in views:
        generated = con.execute(
            "select count(*) from thoughts where status = 'generated'"
        ).fetchone()[0]
    if os.environ.get(LLM_MODEL_ENV):
        return f"Thoughts: {generated} generated for {missing} actions without a recorded one."
    return (
        f"Thoughts: {missing} actions have no recorded thought; no model configured, so none "
        f"was generated (set {LLM_MODEL_ENV} and BIGACTION_LLM_BASE_URL, or run `make llm`: "
        "docs/thoughts.md)."
    )


def unread_lines(con: duckdb.DuckDBPyConnection, views: list[str]) -> list[str]:
    """The landing files nothing reads, with why (docs/sources.md says what each reason means)."""
    lines = ["Unread landing files:"]
    rows = []
    if "unread_landing_files" in views:
        rows = con.execute(
            "select path, reason, detail from unread_landing_files order by path"
        ).fetchall()
    lines += [f"  {path}  {reason}: {detail}" for path, reason, detail in rows] or ["  none"]
    return lines


def summary(paths: Paths, lake: Lake | None = None) -> str:
    """Rows per table, rejects by reason, and where to look next; `lake` is where the catalog's
    views read (the data folder's lake when None)."""
    lines = ["", "Rows per table:"]
    with duckdb.connect(str(paths.catalog), read_only=True) as con:
        if lake is not None:
            register(con, lake)  # an object-store lake's views read `s3://` URLs
        views = [
            r[0]
            for r in con.execute(
                "select view_name from duckdb_views() where not internal order by 1"
            ).fetchall()
        ]
        for view in views:
            count = con.execute(f'select count(*) from "{view}"').fetchone()[0]
            lines.append(f"  {view:<16} {count:>8}")
        lines.append("Rejects by reason:")
        if "rejects" in views:
            rows = con.execute(
                "select dataset, reason, count(*) from rejects group by all order by 1, 2"
            ).fetchall()
            lines += [f"  {dataset:<32} {reason:<18} {n:>5}" for dataset, reason, n in rows]
        if "rejects" not in views or not rows:
            lines.append("  none")
        lines += unread_lines(con, views)
        lines.append(thoughts_line(con, views))

    def beside(name: str) -> str:  # where an output folder is: beside the lake
        return (
            lake.beside(name).uri if isinstance(lake, LakeRoot) else str(paths.lake.parent / name)
        )

    board = paths.lake.parent / "benchmark" / "leaderboard.md"
    shown = board.read_text() if board.exists() else None
    if isinstance(lake, LakeRoot):  # the folders beside an object-store lake
        outputs = lake.beside("benchmark")
        key = outputs.key("leaderboard.md")
        shown = outputs.read_bytes(key).decode() if outputs.exists(key) else None
    if shown is not None:
        lines += ["", "Benchmark leaderboard (bundled demo predictions):", shown.rstrip()]
    lines += [
        "",
        f"Lake (Parquet):   {lake.uri if isinstance(lake, LakeRoot) else paths.lake}",
        f"Catalog (DuckDB): {paths.catalog}",
        f"SFT files:        {beside('sft')}/<openai|sharegpt|openhands>/<split>.jsonl",
        f"Release (Hub):    {beside('release')}  (README.md, data/<config>/*.parquet)",
        f"Benchmark:        {beside('benchmark')}  (leaderboard.md, leaderboard.svg; tables "
        "benchmark_snapshot, eval_results, leaderboard)",
        f"Reward sets:      {beside('reward')}/llama_factory  (judge_*.jsonl, "
        "preference_*.jsonl, dataset_info.json)",
        "",
        "Next:",
        "  make ui                       # the Dagster UI on this data, http://127.0.0.1:3000",
        f'  .venv/bin/duckdb {paths.catalog} "select source, count(*) from episodes group by 1"',
        "  make sql Q=sql/rejects_by_reason.sql   # the queries in sql/",
        "  make annotate                 # the annotation app, http://127.0.0.1:8800 "
        "(accounts: see docs/annotation.md)",
    ]
    return "\n".join(lines)
