"""Reward sets keep the source's split: a train file never yields test rows nor a test file
train rows; ProactiveAgent's draw decides only for judgements that come without a split."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from conftest import land_file, run_ingest, write_standardized

from bigaction_assets.reward.build import build_reward_examples
from bigaction_assets.reward.examples import RewardSettings
from bigaction_assets.reward.rules import Judgement, Observation
from bigaction_assets.reward.split import assign_splits, held_out_ids
from bigaction_assets.sources.proactive import ADAPTER, reward_split

ROOT = Path(__file__).resolve().parents[1]
REAL_ROWS = (ROOT / "landing" / "proactive" / "reward_test.jsonl").read_bytes()  # 30 per category
TRAIN_SAMPLE = (
    ROOT / "landing" / "proactive" / "reward_train.jsonl"
).read_bytes()  # 3 per category
OBS = [{"time": "1.0", "event": "The user opens a file."}]


@pytest.mark.parametrize(
    ("file", "dataset", "split"),
    [
        ("proactive/reward_test.jsonl", "reward_test", "test"),
        ("proactive/reward_train.jsonl", "reward_train", "train"),
        # ProactiveAgent's own folder, as published: dataset/reward_data/{train,test}_data.jsonl
        ("proactive/reward_data/train_data.jsonl", "reward_data", "train"),
        ("proactive/reward_data/test_data.jsonl", "reward_data", "test"),
        ("proactive/reward_data/train/part-0.jsonl", "reward_data", "train"),
        ("proactive/reward.jsonl", "reward", None),
        ("proactive/reward_contest.jsonl", "reward_contest", None),
        ("proactive/reward_train_test.jsonl", "reward_train_test", None),
        ("/srv/test/landing/proactive/reward_latest/rows.jsonl", "reward_latest", None),
    ],
)
def test_a_reward_files_split_is_what_its_name_says(file, dataset, split) -> None:
    assert reward_split(file, dataset) == split


def lake_of(tmp_path: Path, files: dict[str, bytes]) -> Path:
    """A lake holding the proactive datasets of these landing files, as the spine writes them."""
    landing, lake = tmp_path / "landing", tmp_path / "lake"
    for name, data in files.items():
        land_file(landing, "proactive", name, data)
    for dataset, paths in ADAPTER.dataset_files(landing / "proactive").items():
        result = run_ingest(ADAPTER, dataset, paths, landing)
        assert result.rows("rejects") == []
        write_standardized(lake, f"proactive.{dataset}", result.tables)
    return lake


def splits_by_file(lake: Path) -> Counter:
    """(file the judged row came from, kind, split) of every reward example."""
    episodes = {
        row["episode_id"]: row["source_file"].rsplit("/", 1)[-1]
        for path in (lake / "standardized" / "episodes").glob("*.parquet")
        for row in pq.read_table(path, columns=["episode_id", "source_file"]).to_pylist()
    }
    rows, _ = build_reward_examples(lake, RewardSettings())
    return Counter((episodes[r["episode_id"]], r["kind"], r["split"]) for r in rows)


def test_a_train_file_yields_only_train_rows_and_a_test_file_only_test_rows(tmp_path) -> None:
    """ProactiveAgent's test rows landed as a train file (the case that drew 30 test judgements
    per category from a train file) and a small file as the test one."""
    small = b"".join(REAL_ROWS.splitlines(keepends=True)[::30])  # one row per category
    lake = lake_of(tmp_path, {"reward_data/train_data.jsonl": REAL_ROWS,
                              "reward_data/test_data.jsonl": small})  # fmt: skip
    found = splits_by_file(lake)
    assert {(f, s) for f, _, s in found} == {
        ("train_data.jsonl", "train"),
        ("test_data.jsonl", "test"),
    }
    assert found[("train_data.jsonl", "judge", "train")] == 120
    assert found[("test_data.jsonl", "judge", "test")] == 4


def test_rows_without_a_split_are_drawn_by_proactiveagents_rule(tmp_path) -> None:
    found = splits_by_file(lake_of(tmp_path, {"reward.jsonl": REAL_ROWS + TRAIN_SAMPLE}))
    judge = {split: n for (_, kind, split), n in found.items() if kind == "judge"}
    assert judge == {"test": 120, "train": 12}  # 30 of the 33 per category go to test


def row(task: str | None, valid: bool, help_needed: bool) -> bytes:
    votes = [valid, valid, not valid]
    value = {"obs": OBS, "pred_task": task, "valid": valid, "help_needed": help_needed,
             "annotation": votes}  # fmt: skip
    return orjson.dumps(value) + b"\n"


def test_preference_pairs_never_cross_splits(tmp_path) -> None:
    """Proposing nothing was right (CR) and proposing a task wrong (FA), after the same
    observations: a pair within one file, none across a train and a test file."""
    right, wrong = row(None, True, False), row("Open the docs", False, False)
    apart = splits_by_file(lake_of(tmp_path, {"reward_train.jsonl": right,
                                              "reward_test.jsonl": wrong}))  # fmt: skip
    assert [k for k in apart if k[1] == "preference"] == []
    together = splits_by_file(lake_of(tmp_path / "one", {"reward_train.jsonl": right + wrong}))
    assert together[("reward_train.jsonl", "preference", "train")] == 1


def judgement(example_id: str, split: str | None, votes=(True, True, True)) -> Judgement:
    return Judgement(example_id, "e", (Observation("1", "x"),), "t", True, True, votes, "app",
                     split)  # fmt: skip


def test_assign_splits_keeps_given_splits_and_draws_the_rest() -> None:
    given = [judgement("a", "train"), judgement("b", "test")]
    unsplit = [judgement(f"u{n}", None) for n in range(5)]
    splits = assign_splits(given + unsplit, per_category=2)
    assert (splits["a"], splits["b"]) == ("train", "test")
    drawn = held_out_ids(unsplit, per_category=2)
    assert {k for k, v in splits.items() if v == "test"} == {"b"} | drawn and len(drawn) == 2
    with pytest.raises(ValueError, match="'validation'"):
        assign_splits([judgement("c", "validation")])
