"""Erasure ties rows to a sender by columns, whatever the table: one small lake with a table of
each kind (pseudonyms, episode ids, `<episode id>#<n>` ids, and texts of unreadable telemetry
lines), including the tables no telemetry reaches today (web_candidates, benchmark_snapshot),
so that a future telemetry row in them leaves too."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from bigaction_assets.lake import partition_path
from bigaction_assets.lake_writer import write_partition
from bigaction_assets.privacy.erasure import Forgotten, erase_lake
from bigaction_assets.privacy.register import files_offenders

GONE, KEPT = "a" * 32, "b" * 32
DAY = "telemetry.2025-05-14"
THEIRS, OURS = f"telemetry/2025-05-14/{'c' * 32}", f"telemetry/2025-05-14/{'d' * 32}"
TABLES: dict[tuple[str, str, str], dict[str, list]] = {
    ("telemetry", "raw_telemetry", "20250514T100000000000Z-000000000000"): {
        "user_pseudonym": [GONE, KEPT], "session_pseudonym": [KEPT, KEPT],
        "episode_id": [THEIRS, OURS],
    },
    ("standardized", "web_candidates", DAY): {"episode_id": [THEIRS, OURS], "step": [0, 0]},
    ("benchmark", "benchmark_snapshot", DAY): {"episode_id": [THEIRS, OURS], "task_id": ["t", "u"]},
    ("sft", "sft_examples", DAY): {"example_id": [f"{THEIRS}#0", f"{OURS}#0"], "split": ["a", "b"]},
    # lines that could not be read or standardized: only their text says whose they are
    ("raw", "raw_records", DAY): {
        "record_id": [None, f"{OURS}#1"],
        "text": [f'{{"user": "{GONE}", "step": 7', f'{{"user": "{KEPT}"}}'],
    },
    ("standardized", "rejects", DAY): {
        "raw_text": [f'{{"run": "{"c" * 32}"}}', "{}"], "reason": ["missing_field", "x"],
    },
    # the same text in a partition not made from telemetry is nobody's: left alone
    ("standardized", "rejects", "adp.synatra"): {
        "raw_text": [f'{{"user": "{GONE}"}}', "{}"], "reason": ["x", "y"],
    },
}  # fmt: skip


def test_erasure_reaches_every_kind_of_table(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    for (group, asset, key), columns in TABLES.items():
        write_partition(lake, group, asset, key, pl.DataFrame(columns))
    forgotten = Forgotten(frozenset({GONE}), frozenset({THEIRS}))
    paths = [partition_path(lake, g, a, k) for g, a, k in TABLES]
    assert len(files_offenders(paths, forgotten)) == len(TABLES) - 1  # all but adp's rejects

    erased = erase_lake(lake, forgotten)

    assert {table: sum(keys.values()) for table, keys in erased.items()} == {
        "telemetry/raw_telemetry": 1, "standardized/web_candidates": 1,
        "benchmark/benchmark_snapshot": 1, "sft/sft_examples": 1, "raw/raw_records": 1,
        "standardized/rejects": 1,
    }  # fmt: skip
    assert files_offenders(paths, forgotten) == []
    for group, asset, key in TABLES:
        left = pq.read_table(partition_path(lake, group, asset, key)).to_pylist()
        expected = 2 if key == "adp.synatra" else 1
        assert len(left) == expected, (asset, key, left)
        assert GONE not in str(left) or key == "adp.synatra"
