"""The web benchmark skips a dataset whose actions name no operation: the column scan that
decides it finds every dataset that has benchmark steps, and the stage gives the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BUNDLED_LANDING

from bigaction_assets.benchmark.inputs import names_operations
from bigaction_assets.benchmark.steps import benchmark_steps
from bigaction_assets.sources.adp import ADAPTER as ADP
from bigaction_assets.sources.mind2web import ADAPTER as MIND2WEB
from bigaction_assets.sources.proactive import ADAPTER as PROACTIVE
from bigaction_assets.sources.the_wave import ADAPTER as THE_WAVE

BUNDLED = [
    *((ADP, [path]) for path in sorted((BUNDLED_LANDING / "adp").glob("*.json"))),
    (MIND2WEB, [BUNDLED_LANDING / "mind2web" / "train_demo.json"]),
    (THE_WAVE, [BUNDLED_LANDING / "the_wave" / "test_demo.jsonl"]),
    (PROACTIVE, sorted((BUNDLED_LANDING / "proactive" / "traces").glob("*.json"))),
]


@pytest.mark.parametrize(
    ("adapter", "files"), BUNDLED, ids=[f"{a.name}.{f[0].stem}" for a, f in BUNDLED]
)
def test_the_scan_finds_every_dataset_with_steps(
    adapter, files, tmp_lake, ingest_dataset, write_std_tables
):
    name = "traces" if adapter is PROACTIVE else files[0].stem
    ingested = ingest_dataset(adapter, name, files, BUNDLED_LANDING)
    key = f"{adapter.name}.{name}"
    write_std_tables(tmp_lake, key, ingested.tables)
    events: dict[str, list] = {}
    for event in ingested.rows("events"):
        events.setdefault(event["episode_id"], []).append(event)
    steps = [
        step
        for episode in ingested.rows("episodes")
        for step in benchmark_steps(episode, events.get(episode["episode_id"], []), [])
    ]
    # never a miss; on the bundled data not a false alarm either
    assert names_operations(tmp_lake, key) == bool(steps)


def test_the_web_datasets_are_found(tmp_lake, ingest_dataset, write_std_tables):
    """Mind2Web's and the-wave's steps are benchmark steps: the scan must say so."""
    found = []
    for adapter, files in BUNDLED[-3:-1]:
        ingested = ingest_dataset(adapter, files[0].stem, files, BUNDLED_LANDING)
        write_std_tables(tmp_lake, f"{adapter.name}.{files[0].stem}", ingested.tables)
        found.append(names_operations(tmp_lake, f"{adapter.name}.{files[0].stem}"))
    assert found == [True, True]


def test_no_events_no_steps(tmp_lake: Path):
    assert names_operations(tmp_lake, "adp.nothing") is False
