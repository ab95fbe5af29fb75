"""Whether two data folders hold the same outputs: file by file, and the catalog by its answers.

The DuckDB catalog file itself may differ (it records when and in which order views were made),
so it is compared by what every view returns.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

# Everything the factory publishes; the rest of a data folder is state (stamps, the Dagster
# instance, caches, the annotation app's store) that depends on how it was run.
OUTPUTS = ("lake", "sft", "release", "benchmark", "reward")
CATALOG = "bigaction.duckdb"


def file_hashes(data_dir: Path) -> dict[str, str]:
    """sha256 of every output file, by its path under the data folder."""
    hashes = {}
    for folder in OUTPUTS:
        for path in sorted((data_dir / folder).rglob("*")):
            if path.is_file():
                hashes[str(path.relative_to(data_dir))] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    return hashes


def catalog_answers(catalog: Path) -> dict[str, str]:
    """A hash of each view's rows, in a canonical order, by view name."""
    answers = {}
    with duckdb.connect(str(catalog), read_only=True) as con:
        views = [
            row[0]
            for row in con.execute(
                "select view_name from duckdb_views() where not internal order by 1"
            ).fetchall()
        ]
        for view in views:
            rows = sorted(repr(row) for row in con.execute(f'select * from "{view}"').fetchall())
            answers[view] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    return answers


def _diff(kind: str, expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    lines = [
        f"{kind} only in the expected folder: {name}"
        for name in sorted(expected.keys() - actual.keys())
    ]
    lines += [
        f"{kind} only in the actual folder: {name}"
        for name in sorted(actual.keys() - expected.keys())
    ]
    lines += [
        f"{kind} differs: {name}"
        for name in sorted(expected.keys() & actual.keys())
        if expected[name] != actual[name]
    ]
    return lines


def differences(expected: Path, actual: Path) -> list[str]:
    """Every output file or catalog view that is not the same in both folders; none: equal."""
    lines = _diff("file", file_hashes(expected), file_hashes(actual))
    return lines + _diff(
        "view", catalog_answers(expected / CATALOG), catalog_answers(actual / CATALOG)
    )
