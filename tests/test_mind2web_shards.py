"""Mind2Web step rows cut into Hub Parquet shards: a partition per shard, and every task whole
in the partition of the shard where it begins, however the cuts fall."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from bigaction_assets import ingest
from bigaction_assets.sources import adapters
from bigaction_assets.sources.mind2web import ADAPTER
from tests.conftest import run_ingest
from tests.test_mind2web_hub import CLEAN_COLUMNS, clean_row, shard

FOLDER = "mind2web_clean"


def land(tmp_path: Path, cuts: list[list[str]]) -> Path:
    """Shards of step rows, each a list of `<task letter><step>` (`a0`, `a1`, `b0`, ...)."""
    landing = tmp_path / "landing"
    index = 0
    for number, steps in enumerate(cuts):
        rows = []
        for step in steps:
            rows.append(clean_row(index, f"task-{step[0]}", step, int(step[1:])))
            index += 1
        name = f"test-{number:05d}-of-{len(cuts):05d}.parquet"
        shard(landing / "mind2web" / FOLDER, name, CLEAN_COLUMNS, rows, {"Unnamed: 0": pa.int64()})
    return landing


def by_partition(landing: Path) -> dict[str, object]:
    found = ingest.discover(landing, adapters())
    return {
        key: run_ingest(ADAPTER, key.split(".", 1)[1], files, landing)
        for key, files in found.items()
    }


def steps_of(result) -> dict[str, int]:
    return {e["source_id"]: e["num_events"] for e in result.rows("episodes")}


def whole(landing: Path):
    """The same rows read as one dataset, as a folder was before shards."""
    files = sorted((landing / "mind2web" / FOLDER).rglob("*.parquet"))
    return run_ingest(ADAPTER, FOLDER, files, landing)


@pytest.mark.parametrize(
    "cuts",
    [
        [["a0", "a1", "b0"], ["b1", "b2", "c0"], ["c1", "d0"]],  # tasks across both cuts
        [["a0"], ["b0", "b1"], ["b2", "c0"]],  # a shard that begins with its own task
        [["a0", "a1"], ["b0"], ["c0", "c1"]],  # cuts between tasks
        [["a0"], [], ["b0", "c0"]],  # an empty shard
    ],
)
def test_each_task_is_whole_in_the_partition_where_it_begins(tmp_path, cuts) -> None:
    landing = land(tmp_path, cuts)
    parts = by_partition(landing)
    assert len(parts) == len(cuts)
    episodes = Counter()
    for result in parts.values():
        assert result.rows("rejects") == []
        episodes.update(steps_of(result))
    assert dict(episodes) == steps_of(whole(landing))  # each once, as many steps as unsharded
    raw = Counter((r["file"], r["record_index"]) for p in parts.values() for r in p.raw)
    assert set(raw.values()) == {1}  # every landing row in one partition's raw table
    assert len(raw) == sum(len(steps) for steps in cuts)


def test_a_task_that_begins_in_a_shard_is_its_partitions(tmp_path) -> None:
    landing = land(tmp_path, [["a0", "a1", "b0"], ["b1", "b2", "c0"], ["c1", "d0"]])
    parts = by_partition(landing)
    first, second, third = (
        parts[f"mind2web.{FOLDER}~data~test-0000{n}-of-00003"] for n in range(3)
    )
    assert sorted(steps_of(first)) == ["task-a", "task-b"]
    assert sorted(steps_of(second)) == ["task-c"]
    assert sorted(steps_of(third)) == ["task-d"]
    files = {r["file"].rsplit("/", 1)[-1] for r in first.raw}
    assert files == {"test-00000-of-00003.parquet", "test-00001-of-00003.parquet"}


@pytest.mark.parametrize(
    "cuts",
    [
        [["a0", "b0"], ["b1", "b2"], ["b3", "c0"]],  # task b is longer than a shard
        [["a0", "b0"], [], ["b1", "c0"]],  # task b runs on over an empty shard
    ],
)
def test_a_task_past_the_next_shard_is_split_and_shows_as_a_repeated_id(tmp_path, cuts) -> None:
    """A partition reads one shard on; a task that runs past that keeps its further rows in
    the shard they are in: two episodes of one id (which `episode_ids_unique` blocks), never a
    row dropped."""
    landing = land(tmp_path, cuts)
    parts = by_partition(landing)
    episodes = [e["source_id"] for p in parts.values() for e in p.rows("episodes")]
    assert Counter(episodes)["task-b"] == 2
    raw = Counter((r["file"], r["record_index"]) for p in parts.values() for r in p.raw)
    assert set(raw.values()) == {1} and len(raw) == sum(len(steps) for steps in cuts)


def test_an_edit_reruns_the_shard_and_the_neighbours_that_read_its_edges(tmp_path) -> None:
    landing = land(tmp_path, [["a0"], ["b0"], ["c0"], ["d0"], ["e0"]])

    def prints() -> dict[str, str]:
        found = ingest.discover(landing, adapters())
        return {k: ingest.dataset_fingerprint(landing, k, files) for k, files in found.items()}

    before = prints()
    edited = landing / "mind2web" / FOLDER / "data" / "test-00002-of-00005.parquet"
    edited.write_bytes(edited.read_bytes() + b"\n")  # another content, read or not
    after = prints()
    changed = sorted(k.rsplit("~", 1)[1][:10] for k in before if before[k] != after[k])
    assert changed == ["test-00001", "test-00002", "test-00003", "test-00004"]
