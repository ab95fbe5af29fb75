"""The SFT stage through Dagster: examples per dataset, checks, and the training files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from bigaction_assets import lake_writer, quality
from bigaction_assets.definitions import defs
from bigaction_assets.lake_sql import query_connection
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.sft import SFT_FORMATS, SftExampleSchema
from bigaction_assets.sft import examples as sft_examples_module
from bigaction_assets.sft import windows
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.splits import assign_split
from bigaction_assets.sft.validate import PROBLEM_FINDERS

PARTITIONS = "datasets"
DATASETS = (("adp", "synatra"), ("adp", "nnetnav-wa"), ("mind2web", "train_demo"))
BUILD = dg.AssetSelection.groups("raw", "standardized") | dg.AssetSelection.assets("sft_examples")
SFT_CHECKS = {"examples_fit_context", "episodes_in_one_split", "examples_valid_for_consumers"}


@pytest.fixture(scope="module")
def pipeline() -> list[Any]:
    code_location = defs()
    return [*code_location.assets, *(code_location.asset_checks or [])]


@pytest.fixture
def build(pipeline, dagster_lake, ephemeral_instance):
    """`build(key, run_config=None)` materializes one dataset up to its SFT examples."""

    def _build(key: str, run_config: dict | None = None) -> dg.ExecuteInProcessResult:
        if not ephemeral_instance.has_dynamic_partition(PARTITIONS, key):
            ephemeral_instance.add_dynamic_partitions(PARTITIONS, [key])
        return dg.materialize(
            pipeline,
            partition_key=key,
            instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource},
            selection=BUILD,
            run_config=run_config,
            raise_on_error=False,
        )

    return _build


def write_files(pipeline, dagster_lake, instance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        pipeline,
        instance=instance,
        resources={"lake": dagster_lake.resource},
        selection=dg.AssetSelection.assets("sft_files"),
    )


def checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def examples(dagster_lake) -> list[dict[str, Any]]:
    glob = (dagster_lake.root / "sft" / "sft_examples" / "*.parquet").as_posix()
    with duckdb.connect() as con:
        cursor = con.execute(f"select * from read_parquet('{glob}') order by example_id")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_examples_files_and_checks(build, pipeline, dagster_lake, ephemeral_instance):
    for adapter, name in DATASETS:
        dagster_lake.add_bundled(adapter, name)
        result = build(f"{adapter}.{name}")
        assert result.success
        assert checks(result).keys() >= SFT_CHECKS and all(checks(result).values())
        # one read of the stored sample answers both checks; each says how much it verified
        read_back = {
            e.check_name: e.metadata for e in result.get_asset_check_evaluations()
            if e.check_name in ("examples_fit_context", "examples_valid_for_consumers")
        }  # fmt: skip
        assert read_back["examples_fit_context"]["recounted_from_text"].value >= 1
        assert read_back["examples_valid_for_consumers"]["validated_from_text"].value >= 1
    rows = examples(dagster_lake)
    assert {row["source"] for row in rows} == {"synatra", "nnetnav-wa", "mind2web"}
    for row in rows:
        assert row["split"] == assign_split(row["episode_id"]), "split from the episode id"
        assert row["tokens"] <= row["context_tokens"] == 8192

    files = write_files(pipeline, dagster_lake, ephemeral_instance)
    assert files.success
    out = dagster_lake.data / "sft"
    by_split: dict[str, int] = {}
    for row in rows:
        by_split[row["split"]] = by_split.get(row["split"], 0) + 1
    for name in SFT_FORMATS:
        for split, count in by_split.items():
            lines = (out / name / f"{split}.jsonl").read_text().splitlines()
            assert len(lines) == count
            for line in lines:
                assert PROBLEM_FINDERS[name](json.loads(line)) == [], line[:200]
    info = json.loads((out / "sharegpt" / "dataset_info.json").read_text())
    for entry in info.values():
        assert (out / "sharegpt" / entry["file_name"]).exists()
        assert entry["formatting"] == "sharegpt"
        assert entry["columns"]["messages"] == "conversations"


def test_files_are_byte_identical_on_a_rerun(build, pipeline, dagster_lake, ephemeral_instance):
    dagster_lake.add_bundled("adp", "synatra")
    assert build("adp.synatra").success
    write_files(pipeline, dagster_lake, ephemeral_instance)
    out = dagster_lake.data / "sft"

    def digests() -> dict[str, str]:
        return {
            p.relative_to(out).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file()
        }

    first = digests()
    assert build("adp.synatra").success
    write_files(pipeline, dagster_lake, ephemeral_instance)
    assert digests() == first


def test_worker_processes_write_the_same_partition_bytes(build, dagster_lake):
    dagster_lake.add_bundled("adp", "nnetnav-wa")
    partition = dagster_lake.root / "sft" / "sft_examples" / "adp.nnetnav-wa.parquet"
    small = {"max_tokens": 3000, "observation_tokens": 800}  # several windows per episode
    digests = []
    for workers in (1, 2):
        config = {"ops": {"sft_examples": {"config": {**small, "workers": workers}}}}
        result = build("adp.nnetnav-wa", run_config=config)
        assert result.success and _sft_metadata(result)["workers"] == workers
        digests.append(hashlib.sha256(partition.read_bytes()).hexdigest())
    assert digests[0] == digests[1]


def test_a_small_context_cuts_episodes_into_windows_that_fit(build, dagster_lake):
    dagster_lake.add_bundled("adp", "nnetnav-wa")
    config = {"ops": {"sft_examples": {"config": {"max_tokens": 3000, "observation_tokens": 800}}}}
    result = build("adp.nnetnav-wa", run_config=config)
    assert result.success and all(checks(result).values())
    rows = examples(dagster_lake)
    assert max(row["windows"] for row in rows) > 1
    assert all(row["tokens"] <= 3000 for row in rows)


def test_an_undercounting_stage_fails_the_blocking_check(build, dagster_lake, monkeypatch):
    """The check counts every example again from its stored text, so a windowing that believed
    a wrong count cannot slip an over-long example through."""
    dagster_lake.add_bundled("adp", "nnetnav-wa")
    monkeypatch.setattr(windows.LengthCounter, "total", lambda counter, tallies: 1)
    config = {"ops": {"sft_examples": {"config": {"max_tokens": 3000, "observation_tokens": 800}}}}
    result = build("adp.nnetnav-wa", run_config=config)
    assert not result.success
    assert checks(result)["examples_fit_context"] is False


def _without_call_ids(conversation):
    """An openai renderer with a bug: tool calls lose their ids."""
    example = render_openai(conversation)
    for message in example["messages"]:
        for call in message.get("tool_calls") or []:
            call.pop("id")
    return example


def _sft_metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    [materialization] = [
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "sft_examples"
    ]
    return {key: value.value for key, value in materialization.metadata.items()}


def test_a_window_a_consumer_would_refuse_keeps_its_episode_out_and_says_why(
    build, dagster_lake, monkeypatch
):
    """A windowing bug: later windows open on the tool result of a call in the window before
    (instead of showing it as what the user sees). The stage checks each window's turns before
    rendering them and keeps such episodes out, with the reason."""
    dagster_lake.add_bundled("adp", "nnetnav-wa")
    monkeypatch.setattr(windows, "_detached", lambda before: before)
    config = {"ops": {"sft_examples": {"config": {"max_tokens": 3000, "observation_tokens": 800}}}}
    result = build("adp.nnetnav-wa", run_config=config)
    assert result.success
    metadata = _sft_metadata(result)
    assert metadata["episodes_skipped_by_reason"].get("invalid_for_consumer", 0) >= 1
    assert "a tool result that does not follow its call" in json.dumps(metadata["episodes_skipped"])
    # the first window of each is fine (it opens on the task), yet none of its windows is kept
    assert all(not skip["why"].startswith("window 0:") for skip in metadata["episodes_skipped"])
    kept = {row["episode_id"] for row in examples(dagster_lake)}
    assert not kept & {skip["episode_id"] for skip in metadata["episodes_skipped"]}


def test_a_stored_example_a_consumer_refuses_fails_the_check(build, dagster_lake, monkeypatch):
    """The stage renders from turns it has checked, not checking its own renderings again; a
    renderer bug reaches the lake, where the check reading the stored text fails."""
    dagster_lake.add_bundled("adp", "synatra")
    monkeypatch.setitem(sft_examples_module.RENDERERS, "openai", _without_call_ids)
    result = build("adp.synatra")
    assert not result.success
    assert checks(result)["examples_valid_for_consumers"] is False


def test_sft_examples_metadata(build, dagster_lake):
    dagster_lake.add_bundled("adp", "synatra")
    result = build("adp.synatra")
    [materialization] = [
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "sft_examples"
    ]
    metadata = {key: value.value for key, value in materialization.metadata.items()}
    assert metadata["dagster/row_count"] == sum(metadata["examples_by_split"].values()) == 5
    assert metadata["thought_sources"] == {"recorded": 5}
    assert metadata["tokens_total"] > 0
    assert "| example_id | split | tokens | thought_source |" in metadata["preview"]


def sft_metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    [materialization] = [
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "sft_examples"
    ]
    return {key: value.value for key, value in materialization.metadata.items()}


@pytest.mark.parametrize(
    ("dataset", "episodes"), [("androidcontrol", 3), ("swe-play-trajectories", 1)]
)
def test_datasets_once_lost_whole_give_every_episode(build, dagster_lake, dataset, episodes):
    dagster_lake.add_bundled("adp", dataset)
    result = build(f"adp.{dataset}")
    assert result.success and all(checks(result).values())
    assert sft_metadata(result)["episodes_skipped_by_reason"] == {}
    assert len({row["episode_id"] for row in examples(dagster_lake)}) == episodes


def test_episodes_left_out_for_their_data_are_counted_by_reason(build, dagster_lake):
    acting = {"class_": "api_action", "function": "click", "kwargs": {"bid": '"1"'}}
    seeing = {"class_": "text_observation", "content": "Only a page.", "source": "environment"}
    told = {"class_": "text_observation", "content": "Click it.", "source": "user"}
    trajectories = [
        {"id": "no-task", "content": [acting, seeing], "details": {}},
        {"id": "no-action", "content": [told, seeing], "details": {}},
        {"id": "fine", "content": [told, seeing, acting], "details": {}},
    ]
    dagster_lake.write_landing("adp/reasons.json", json.dumps(trajectories))
    result = build("adp.reasons")
    assert result.success
    metadata = sft_metadata(result)
    assert metadata["episodes_skipped_by_reason"] == {"no_task": 1, "no_agent_action": 1}
    assert {row["episode_id"] for row in examples(dagster_lake)} == {"reasons/fine"}


def test_stale_split_files_are_removed(build, pipeline, dagster_lake, ephemeral_instance):
    dagster_lake.add_bundled("adp", "synatra")
    assert build("adp.synatra").success
    stale = dagster_lake.data / "sft" / "openai" / "old_split.jsonl"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{}\n")
    write_files(pipeline, dagster_lake, ephemeral_instance)
    assert not stale.exists()
    assert Path(dagster_lake.data / "sft" / "openai").is_dir()


def test_episodes_that_cannot_fit_are_reported_not_dropped(build, dagster_lake):
    dagster_lake.add_bundled("adp", "swe-smith")
    config = {"ops": {"sft_examples": {"config": {"max_tokens": 2048, "observation_tokens": 256}}}}
    result = build("adp.swe-smith", run_config=config)
    assert result.success
    [materialization] = [
        e.materialization
        for e in result.get_asset_materialization_events()
        if e.materialization.asset_key.to_user_string() == "sft_examples"
    ]
    skipped = materialization.metadata["episodes_skipped_by_reason"].value
    listed = materialization.metadata["episodes_skipped"].value
    assert skipped.get("does_not_fit_context", 0) >= 1
    assert len(listed) == sum(skipped.values())
    kept = {row["episode_id"] for row in examples(dagster_lake)}
    assert len(kept) + sum(skipped.values()) == 5, "every episode is either kept or reported"
    assert not kept & {item["episode_id"] for item in listed}


def sft_row(example_id: str, episode_id: str, split: str, tokens: int) -> dict[str, Any]:
    return {
        "example_id": example_id, "episode_id": episode_id, "dataset": "adp.a", "source": "a",
        "window": 0, "windows": 1, "split": split, "tokens": tokens, "context_tokens": 100,
        "turns": 2, "thought_source": "none", "content_sha": example_id, "images": [],
        "image_tokens": 0, "openai": "{}", "sharegpt": "{}", "openhands": "{}",
    }  # fmt: skip


def test_sft_quality_finders_on_a_tiny_table(tmp_path):
    rows = [
        sft_row("a/1#0", "a/1", "train", 90),
        sft_row("a/1#1", "a/1", "test", 120),
        sft_row("a/2#0", "a/2", "train", 100),
    ]
    lake_writer.write_partition(
        tmp_path, "sft", "sft_examples", "adp.a", frame(SftExampleSchema, rows)
    )
    with query_connection() as con:
        assert quality.episodes_in_several_splits(con, tmp_path) == [
            {"episode_id": "a/1", "splits": ["test", "train"]}
        ]


def test_a_user_who_asks_for_one_format_gets_that_format_alone(
    build, pipeline, dagster_lake, ephemeral_instance
):
    dagster_lake.add_bundled("adp", "nnetnav-wa")
    small = {"max_tokens": 3000, "observation_tokens": 800}
    everything = build("adp.nnetnav-wa", run_config={"ops": {"sft_examples": {"config": small}}})
    assert everything.success
    all_formats = {row["example_id"]: row for row in examples(dagster_lake)}
    config = {**small, "formats": ["openai"]}
    result = build("adp.nnetnav-wa", run_config={"ops": {"sft_examples": {"config": config}}})
    assert result.success and all(checks(result).values())
    assert _sft_metadata(result)["formats"] == ["openai"]
    rows = examples(dagster_lake)
    assert rows and all(row["sharegpt"] is None and row["openhands"] is None for row in rows)
    # windows fit the one format, so they may be longer; the openai renderings stay valid
    assert all(json.loads(row["openai"])["messages"] for row in rows)
    assert all(row["tokens"] <= 3000 for row in rows)
    assert len(rows) <= len(all_formats)
    files = write_files(pipeline, dagster_lake, ephemeral_instance)
    assert files.success
    out = dagster_lake.data / "sft"
    assert sorted(p.parent.name for p in out.rglob("*.jsonl")) == ["openai"] * len(
        list((out / "openai").glob("*.jsonl"))
    )


def test_an_unknown_format_is_refused_by_name(build, dagster_lake):
    dagster_lake.add_bundled("adp", "synatra")
    config = {"ops": {"sft_examples": {"config": {"formats": ["alpaca"]}}}}
    result = build("adp.synatra", run_config=config)
    assert not result.success
    assert "alpaca" in str(result.all_events)
