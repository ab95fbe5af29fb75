"""Sharded landing datasets through `make demo`'s runner, in one temporary folder: each shard
is a partition from the raw records to the release, the cross-dataset outputs read every
shard, an edited shard rebuilds alone and an added one leaves every other file as it was.

The tests run in order on one data folder (as in test_rerun_e2e.py).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from tests.test_rerun_e2e import REPO, Demo, ran

pytestmark = pytest.mark.e2e

SYNATRA = ("adp.synatra~part-00000", "adp.synatra~part-00001")
MIND2WEB = ("mind2web.train_demo~part-0", "mind2web.train_demo~part-1")
SHARDS = (*SYNATRA, *MIND2WEB)
PER_PARTITION = (  # tables with a file per dataset partition, by (group, asset)
    ("raw", "raw_records"), ("standardized", "episodes"), ("standardized", "events"),
    ("sft", "sft_examples"), ("benchmark", "eval_results"),
)  # fmt: skip


def jsonl(records: list) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def table_rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def lake_files_of(made: set[str]) -> set[str]:
    return {name for name in made if name.startswith("lake/")}


def partition_of(name: str) -> str:
    """The partition a lake file (`lake/<group>/<asset>/<key>.parquet`) or release file
    (`release/data/<config>/<key>/<shard>`) belongs to."""
    parts = name.split("/")
    return parts[3] if name.startswith("release/") else parts[-1].removesuffix(".parquet")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """synatra as two JSONL shards (its last trajectory held back for a later shard),
    Mind2Web's demo tasks as two raw-task files beside their screenshots, and the demo's
    predictions, so the leaderboard scores steps from both of its shards."""
    root = tmp_path_factory.mktemp("shards")
    landing, bundled = root / "landing", REPO / "landing"
    trajectories = json.loads((bundled / "adp" / "synatra.json").read_bytes())
    (landing / "adp" / "synatra").mkdir(parents=True)
    (landing / "adp" / "synatra" / "part-00000.jsonl").write_bytes(jsonl(trajectories[:2]))
    (landing / "adp" / "synatra" / "part-00001.jsonl").write_bytes(jsonl(trajectories[2:4]))
    (root / "held_back.jsonl").write_bytes(jsonl(trajectories[4:]))
    tasks = json.loads((bundled / "mind2web" / "train_demo.json").read_bytes())
    (landing / "mind2web" / "train_demo").mkdir(parents=True)
    for index, part in enumerate((tasks[:2], tasks[2:])):
        (landing / "mind2web" / "train_demo" / f"part-{index}.json").write_bytes(orjson.dumps(part))
    shutil.copytree(
        bundled / "mind2web" / "train_demo.images", landing / "mind2web" / "train_demo.images"
    )
    shutil.copytree(bundled / "predictions", landing / "predictions")
    demo = Demo(root)
    demo.first_output, demo.first_made = demo.run()
    return demo


def test_each_shard_is_a_partition_from_raw_records_to_the_release(demo: Demo) -> None:
    assert set(SHARDS) <= ran(demo.first_output), demo.first_output
    assert "release" in ran(demo.first_output)
    lake = demo.data / "lake"
    for group, asset in PER_PARTITION:
        for key in SHARDS:
            assert (lake / group / asset / f"{key}.parquet").is_file(), (asset, key)
    for key in SYNATRA:
        episodes = table_rows(lake / "standardized" / "episodes" / f"{key}.parquet")
        assert episodes and {e["source"] for e in episodes} == {"synatra"}
        assert {e["dataset"] for e in episodes} == {key}
        for config in ("episodes", "events", "sft_openai"):
            assert list((demo.data / "release" / "data" / config / key).glob("*.parquet"))
    card = (demo.data / "release" / "README.md").read_text()
    for key in SHARDS:  # provenance: each shard with its landing file and sha256
        assert f"`{key}`" in card


def test_the_sft_files_hold_the_examples_of_every_shard(demo: Demo) -> None:
    lake = demo.data / "lake" / "sft" / "sft_examples"
    by_shard = {key: table_rows(lake / f"{key}.parquet") for key in SHARDS}
    assert all(by_shard.values()), {k: len(v) for k, v in by_shard.items()}
    lines = [
        orjson.loads(line)
        for path in sorted((demo.data / "sft" / "openai").glob("*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]
    # every partition's examples, the shards' and the telemetry day's the demo lands
    every = {path.stem: table_rows(path) for path in lake.glob("*.parquet")}
    assert set(SHARDS) <= set(every)
    assert len(lines) == sum(len(rows) for rows in every.values())


def test_the_leaderboard_scores_the_steps_of_every_shard(demo: Demo) -> None:
    lake = demo.data / "lake" / "benchmark"
    scored: dict[str, set] = {}
    for key in MIND2WEB:
        rows = table_rows(lake / "eval_results" / f"{key}.parquet")
        assert rows, key  # each shard has steps of its own
        for row in rows:
            scored.setdefault(row["model"], set()).add((row["task_id"], row["step"]))
    board = {
        (row["model"], row["split"]): row["steps"]
        for row in table_rows(lake / "leaderboard" / "all.parquet")
    }
    assert scored
    for model, steps in scored.items():
        assert board[(model, "train")] == len(steps)


def test_an_edited_shard_rebuilds_that_shard_only(demo: Demo) -> None:
    path = demo.landing / "adp" / "synatra" / "part-00001.jsonl"
    stat = path.stat()
    text = path.read_bytes()
    at = text.index(b"Objective: ") + len(b"Objective: ")
    path.write_bytes(text[:at] + text[at : at + 1].swapcase() + text[at + 1 :])
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # as if it had not changed

    output, made = demo.run()

    assert {name for name in ran(output) if "." in name} == {"adp.synatra~part-00001"}
    lake = lake_files_of(made)
    assert "lake/raw/raw_records/adp.synatra~part-00001.parquet" in lake
    assert {partition_of(name) for name in lake} <= {"adp.synatra~part-00001", "all"}, lake
    release = {name for name in made if name.startswith("release/data/")}
    assert release and {partition_of(name) for name in release} == {"adp.synatra~part-00001"}


def test_an_added_shard_adds_its_partition_and_leaves_every_other_file(demo: Demo) -> None:
    before = sorted(p.name for p in (demo.data / "lake" / "raw" / "raw_records").iterdir())
    shutil.copy(
        demo.root / "held_back.jsonl", demo.landing / "adp" / "synatra" / "part-00002.jsonl"
    )

    output, made = demo.run()

    assert {name for name in ran(output) if "." in name} == {"adp.synatra~part-00002"}
    after = sorted(p.name for p in (demo.data / "lake" / "raw" / "raw_records").iterdir())
    assert set(after) - set(before) == {"adp.synatra~part-00002.parquet"}
    assert {partition_of(name) for name in lake_files_of(made)} <= {"adp.synatra~part-00002", "all"}
    release = {name for name in made if name.startswith("release/data/")}
    assert release and {partition_of(name) for name in release} == {"adp.synatra~part-00002"}
    episodes = table_rows(
        demo.data / "lake" / "standardized" / "episodes" / "adp.synatra~part-00002.parquet"
    )
    assert [e["episode_id"] for e in episodes] == ["synatra/4"]


def test_then_nothing_is_out_of_date(demo: Demo) -> None:
    output, made = demo.run()
    assert ran(output) == set() and made == set()
