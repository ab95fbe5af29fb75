"""Repeated episode ids across the whole `episodes` table: exact, and read once per file version."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from s3_server import s3_server

from bigaction_assets import episode_ids, lake, lake_writer
from bigaction_assets.episode_ids import SNAPSHOT_STEPS, repeated_episode_ids, repeated_keys
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.lakefs import LakeRoot


def write(root: lake.Lake, partition: str, ids: list[str | None]) -> None:
    rows = pl.DataFrame({"episode_id": ids, "dataset": [partition] * len(ids)})
    lake_writer.write_partition(root, "standardized", "episodes", partition, rows)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    write(root, "adp.a", ["a/1", "a/2", "a/3"])
    write(root, "adp.b~part-1", ["b/1", "b/2"])
    write(root, "adp.b~part-2", ["b/3"])
    return root


def test_a_table_without_repeats_has_none(three: Path) -> None:
    offenders, tally = repeated_episode_ids(three)
    assert offenders == []
    assert tally == {"partitions": 3, "partitions_read": 3, "partitions_confirmed": 0}


def test_no_table_has_no_repeats(tmp_path: Path) -> None:
    assert repeated_episode_ids(tmp_path / "lake")[0] == []


def test_repeats_across_and_within_partitions_are_named_with_their_datasets(three: Path) -> None:
    write(three, "adp.b~part-2", ["b/3", "b/1", "a/2", "b/3"])
    offenders, tally = repeated_episode_ids(three)
    assert offenders == [
        {"episode_id": "a/2", "copies": 2, "datasets": ["adp.a", "adp.b~part-2"]},
        {"episode_id": "b/1", "copies": 2, "datasets": ["adp.b~part-1", "adp.b~part-2"]},
        {"episode_id": "b/3", "copies": 2, "datasets": ["adp.b~part-2", "adp.b~part-2"]},
    ]
    assert tally["partitions_confirmed"] == 3
    assert repeated_episode_ids(three, limit=1)[0] == offenders[:1]


def test_ids_that_only_share_a_hash_are_no_repeat(
    three: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a hash that gives every id the same value, every partition is a suspect: only the
    ids themselves decide."""
    monkeypatch.setattr(episode_ids, "id_hashes", lambda ids: np.zeros(len(ids), np.uint64))
    assert repeated_episode_ids(three)[0] == []
    write(three, "adp.c", ["b/2"])
    offenders, tally = repeated_episode_ids(three)
    assert offenders == [{"episode_id": "b/2", "copies": 2, "datasets": ["adp.b~part-1", "adp.c"]}]
    assert tally["partitions_confirmed"] == 4


def test_a_step_reads_only_the_partitions_new_or_rewritten_since_it_last_looked(
    three: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"

    def check() -> tuple[list[dict], dict[str, int]]:
        return repeated_episode_ids(three, cache=cache)

    assert check()[1]["partitions_read"] == 3
    assert check()[1]["partitions_read"] == 0
    write(three, "adp.b~part-2", ["b/3", "a/1"])  # rewritten: a new version
    write(three, "adp.d", ["d/1"])  # added
    offenders, tally = check()
    assert tally == {"partitions": 4, "partitions_read": 2, "partitions_confirmed": 2}
    assert offenders == [{"episode_id": "a/1", "copies": 2, "datasets": ["adp.a", "adp.b~part-2"]}]
    lake.partition_path(three, "standardized", "episodes", "adp.a").unlink()  # erased
    offenders, tally = check()
    assert offenders == [] and tally["partitions_read"] == 0
    assert len(list(cache.glob("*.npy"))) == 3, "the gone versions' hashes are dropped"


def test_a_cache_file_cut_short_is_read_again(three: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    repeated_episode_ids(three, cache=cache)
    for path in cache.glob("*.npy"):
        path.write_bytes(path.read_bytes()[:20])
    assert repeated_episode_ids(three, cache=cache)[1]["partitions_read"] == 3
    assert repeated_episode_ids(three, cache=cache)[1]["partitions_read"] == 0


def test_null_ids_repeat_like_any_other(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    table = pa.table({"episode_id": pa.array([None, "x/1"], pa.string()), "dataset": ["a", "a"]})
    lake_writer.write_partition(root, "standardized", "episodes", "a", pl.from_arrow(table))
    write(root, "b", [None])
    [offender] = repeated_episode_ids(root)[0]
    assert offender == {"episode_id": None, "copies": 2, "datasets": ["a", "b"]}


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


def test_on_a_store_the_same_repeats_and_one_listing_for_what_is_cached(
    bucket: str, tmp_path: Path
) -> None:
    root = parse_lake(f"s3://{bucket}/episode-ids/lake")
    assert isinstance(root, LakeRoot)
    write(root, "adp.a", ["a/1", "a/2"])
    write(root, "adp.b", ["b/1", "a/2"])
    cache = tmp_path / "cache"
    offenders, tally = repeated_episode_ids(root, cache=cache)
    assert offenders == [{"episode_id": "a/2", "copies": 2, "datasets": ["adp.a", "adp.b"]}]
    assert tally == {"partitions": 2, "partitions_read": 2, "partitions_confirmed": 2}
    write(root, "adp.b", ["b/1"])
    offenders, tally = repeated_episode_ids(root, cache=cache)
    assert offenders == [] and tally["partitions_read"] == 1


def test_a_cache_that_cannot_be_written_is_reported_and_the_gate_still_answers(
    three: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    write(three, "adp.c", ["a/3"])
    with caplog.at_level(logging.WARNING, "bigaction_assets.episode_ids"):
        offenders, _ = repeated_episode_ids(three, cache=blocked / "cache")
    assert [o["episode_id"] for o in offenders] == ["a/3"]
    assert "not kept" in caplog.text


def write_steps(root: lake.Lake, partition: str, steps: list[tuple[str, int]]) -> None:
    rows = pl.DataFrame(
        {"episode_id": [e for e, _ in steps], "step": [s for _, s in steps],
         "dataset": [partition] * len(steps)},
        schema_overrides={"step": pl.Int32},
    )  # fmt: skip
    lake_writer.write_partition(root, "benchmark", "benchmark_snapshot", partition, rows)


def test_snapshot_steps_repeat_as_pairs_not_as_episodes(tmp_path: Path) -> None:
    """An episode's several steps are no repeat; the same (episode, step) twice is, in one
    partition or across two, step 0 among them."""
    root = tmp_path / "lake"
    write_steps(root, "mind2web.a", [("e/1", 0), ("e/1", 1), ("e/2", 0)])
    write_steps(root, "mind2web.b", [("f/1", 0), ("f/1", 1)])
    assert repeated_keys(root, SNAPSHOT_STEPS)[0] == []
    write_steps(root, "mind2web.b", [("f/1", 0), ("e/1", 0), ("f/1", 3), ("f/1", 3)])
    offenders, tally = repeated_keys(root, SNAPSHOT_STEPS)
    assert offenders == [
        {"episode_id": "e/1", "step": 0, "copies": 2, "datasets": ["mind2web.a", "mind2web.b"]},
        {"episode_id": "f/1", "step": 3, "copies": 2, "datasets": ["mind2web.b", "mind2web.b"]},
    ]
    assert tally == {"partitions": 2, "partitions_read": 2, "partitions_confirmed": 2}


def test_pairs_that_only_share_a_hash_are_no_repeat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lake"
    write_steps(root, "mind2web.a", [("e/1", 0), ("e/1", 1)])
    write_steps(root, "mind2web.b", [("e/1", 2)])
    monkeypatch.setattr(episode_ids, "key_hashes", lambda keys: np.zeros(len(keys), np.uint64))
    offenders, tally = repeated_keys(root, SNAPSHOT_STEPS)
    assert offenders == [] and tally["partitions_confirmed"] == 2
