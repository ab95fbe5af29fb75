"""A landing dataset delivered as a folder of files: a partition per file, with stable keys."""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest, quality
from bigaction_assets.images.refs import image_files
from bigaction_assets.lake_sql import query_connection
from bigaction_assets.release.provenance import NotRedistributable, releasable
from bigaction_assets.shard_keys import MAX_KEY_CHARS, dataset_of, shard_name
from bigaction_assets.sources import adapters
from bigaction_assets.sources.adp import ADAPTER as ADP
from tests.conftest import ROOT, run_ingest, write_standardized

SYNATRA = ROOT / "landing" / "adp" / "synatra.json"
# The bundled landing's keys before shards existed: `make demo` and its lake keep them.
BUNDLED_KEYS = [
    "adp.agenttuning_mind2web", "adp.android_in_the_wild", "adp.androidcontrol", "adp.nnetnav-wa",
    "adp.swe-play-trajectories", "adp.swe-smith", "adp.synatra", "adp.webarena_successful",
    "mind2web.train_demo", "proactive.reward_test", "proactive.reward_train", "proactive.traces",
    "the_wave.test_demo",
]  # fmt: skip


def write(path: Path, data: bytes = b"[]") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def jsonl(records: list[dict]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def synatra_shards(landing: Path, parts: dict[str, list[int]]) -> list[dict]:
    """synatra's trajectories split over `adp/synatra/<name>.jsonl` files, by position."""
    trajectories = json.loads(SYNATRA.read_bytes())
    for name, positions in parts.items():
        write(
            landing / "adp" / "synatra" / f"{name}.jsonl",
            jsonl([trajectories[i] for i in positions]),
        )
    return trajectories


def test_the_bundled_datasets_keep_their_keys() -> None:
    found = ingest.discover(ROOT / "landing", adapters())
    # telemetry days land when `make demo` runs (landing/telemetry is not in the repo)
    assert sorted(key for key in found if not key.startswith("telemetry.")) == BUNDLED_KEYS


def test_a_folder_is_a_partition_per_file_named_by_its_path_not_its_position(tmp_path) -> None:
    landing = tmp_path / "landing"
    a = write(landing / "adp" / "big" / "part-00000.jsonl")
    b = write(landing / "adp" / "big" / "data" / "train-00001-of-00008.json")
    spark = write(landing / "adp" / "big" / "part-00002-3f2a.c000.snappy.jsonl")
    found = ingest.discover(landing, adapters())
    assert found == {
        "adp.big~data~train-00001-of-00008": [b],
        "adp.big~part-00000": [a],
        "adp.big~part-00002-3f2a.c000.snappy": [spark],
    }
    assert {dataset_of(key) for key in found} == {"adp.big"}


def test_adding_a_shard_adds_one_key_and_leaves_every_other_as_it_was(tmp_path) -> None:
    landing = tmp_path / "landing"
    for name in ("part-00000", "part-00002"):
        write(landing / "adp" / "big" / f"{name}.jsonl")
    before = ingest.discover(landing, adapters())
    write(landing / "adp" / "big" / "part-00001.jsonl")  # between the others in name order
    after = ingest.discover(landing, adapters())
    assert set(after) - set(before) == {"adp.big~part-00001"}
    assert {key: after[key] for key in before} == before


@pytest.mark.parametrize(
    "names",
    [
        ["part 1.jsonl"],  # a space
        ["part~1.jsonl"],  # the separator itself
        ["date=2024-01-01/part-0.jsonl"],  # a Hive folder: DuckDB would read a column from it
        ["a..b.jsonl"],  # Dagster's range syntax
        ["part-0.json", "part-0.jsonl"],  # two files, one shard
        [("x" * 100) + "/" + ("y" * 100) + ".jsonl"],  # too long to name a lake file
    ],
)
def test_a_shard_that_cannot_be_a_key_is_refused_with_why(tmp_path, names) -> None:
    for name in names:
        write(tmp_path / "landing" / "adp" / "big" / name)
    with pytest.raises(ValueError, match=r"shard|partition"):
        ingest.discover(tmp_path / "landing", adapters())


def test_shard_names_map_paths_one_to_one() -> None:
    assert shard_name("big", PurePosixPath("a/b.jsonl")) == "big~a~b"
    assert shard_name("big", PurePosixPath("a.b.jsonl")) == "big~a.b"
    assert len("adp." + "x" * MAX_KEY_CHARS) > MAX_KEY_CHARS


def hub_step_shard(path: Path, tasks: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"annotation_id": tasks, "action_uid": tasks}), path)


def test_folders_whose_files_belong_together_stay_one_partition(tmp_path) -> None:
    """A thought cache joins trajectories of every file; a ProactiveBench trace file is one
    episode; SeeAct's step rows run across files (the Hub's are followed across the edges)."""
    landing = tmp_path / "landing"
    write(landing / "adp" / "cached" / "part-0.jsonl")
    write(landing / "adp" / "cached.generated_thoughts.json", b"{}")
    hub_step_shard(landing / "mind2web" / "steps" / "data" / "train-00000-of-00002.parquet", ["t"])
    hub_step_shard(landing / "mind2web" / "steps" / "data" / "train-00001-of-00002.parquet", ["t"])
    write(landing / "mind2web" / "raw" / "train_0.json")  # raw tasks: whole in each record
    write(landing / "mind2web" / "raw" / "train_1.json")
    write(landing / "proactive" / "traces" / "code_1.json")
    write(landing / "proactive" / "traces" / "code_2.json")
    write(landing / "the_wave" / "wave-250" / "meta.csv", b"query,html,xpath\n")
    write(landing / "mind2web" / "seeact" / "steps.jsonl")  # step rows, but not the Hub's
    write(landing / "mind2web" / "seeact" / "more.jsonl")
    found = ingest.discover(landing, adapters())
    assert sorted(found) == [
        "adp.cached", "mind2web.raw~train_0", "mind2web.raw~train_1", "mind2web.seeact",
        "mind2web.steps~data~train-00000-of-00002", "mind2web.steps~data~train-00001-of-00002",
        "proactive.traces", "the_wave.wave-250~meta",
    ]  # fmt: skip
    assert [p.name for p in found["adp.cached"]] == [
        "cached.generated_thoughts.json",
        "part-0.jsonl",
    ]
    # the Hub's step rows: a partition per shard, which reads the edges of its neighbours
    first, second = (found[f"mind2web.steps~data~train-0000{n}-of-00002"] for n in (0, 1))
    assert first == [*second[1:], second[0]]  # its own file first, then the other


def test_a_shard_is_standardized_as_its_dataset_and_the_shards_add_up_to_it(tmp_path) -> None:
    """Episode ids and sources come from the dataset, not the shard: the shards' episodes are
    the single file's, whichever way the dataset landed."""
    whole = run_ingest(ADP, "synatra", [SYNATRA], SYNATRA.parents[1])
    landing = tmp_path / "landing"
    synatra_shards(landing, {"part-00000": [0, 1], "part-00001": [2, 3, 4]})
    found = ingest.discover(landing, adapters())
    shards = [
        run_ingest(ADP, key.split(".", 1)[1], found[key], landing)
        for key in ("adp.synatra~part-00000", "adp.synatra~part-00001")
    ]

    def content(rows: list[dict]) -> list[tuple]:
        return sorted((r["episode_id"], r["source"], r["content_sha"]) for r in rows)

    assert content([e for s in shards for e in s.rows("episodes")]) == content(
        whole.rows("episodes")
    )
    assert {e["dataset"] for e in shards[1].rows("episodes")} == {"adp.synatra~part-00001"}
    assert {r["dataset"] for r in shards[1].raw} == {"adp.synatra~part-00001"}


def test_an_id_repeated_across_shards_is_caught_by_the_blocking_check(tmp_path) -> None:
    """Shards are standardized apart (a changed shard must not rebuild the others), so a
    repeat across two shards is not a `duplicate_id` reject: `episode_ids_unique` names it."""
    landing, lake = tmp_path / "landing", tmp_path / "lake"
    synatra_shards(landing, {"part-00000": [0, 1], "part-00001": [1, 2]})
    for key, files in ingest.discover(landing, adapters()).items():
        result = run_ingest(ADP, key.split(".", 1)[1], files, landing)
        assert result.rows("rejects") == []
        write_standardized(lake, key, result.tables)
    with query_connection() as con:
        [repeat] = quality.duplicate_episode_ids(con, lake)
    assert repeat["episode_id"] == "synatra/1"
    assert sorted(repeat["datasets"]) == ["adp.synatra~part-00000", "adp.synatra~part-00001"]


def test_each_shard_fingerprint_follows_its_own_file(tmp_path) -> None:
    landing = tmp_path / "landing"
    synatra_shards(landing, {"part-00000": [0, 1], "part-00001": [2, 3]})

    def prints() -> dict[str, str]:
        found = ingest.discover(landing, adapters())
        return {k: ingest.dataset_fingerprint(landing, k, files) for k, files in found.items()}

    before = prints()
    shard = landing / "adp" / "synatra" / "part-00001.jsonl"
    shard.write_bytes(shard.read_bytes().replace(b"Objective: ", b"Objective:  ", 1))
    after = prints()
    assert {k for k in before if before[k] != after[k]} == {"adp.synatra~part-00001"}


def test_a_shard_reads_its_datasets_image_folder(tmp_path) -> None:
    folder = tmp_path / "landing" / "mind2web"
    write(folder / "train_demo" / "part-0.json")
    shot = write(folder / "train_demo.images" / "a.png", b"not read here")
    assert image_files(folder, "train_demo~part-0") == image_files(folder, "train_demo") == [shot]


def test_the_release_leaves_out_a_sharded_dataset_by_its_name() -> None:
    shards = ["mind2web.test_task~part-0", "mind2web.test_task~part-1", "adp.synatra~part-0"]
    with pytest.raises(NotRedistributable, match=r"exclude_datasets: \['mind2web.test_task'\]"):
        releasable(shards, [])
    assert releasable(shards, ["mind2web.test_task"]) == ["adp.synatra~part-0"]
    assert releasable(shards, ["mind2web.test_task~part-0", "mind2web.test_task~part-1"]) == [
        "adp.synatra~part-0"
    ]
