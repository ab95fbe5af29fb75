"""The benchmark stage through Dagster: snapshot, scores, leaderboard, checks, reruns."""

from __future__ import annotations

import shutil

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets.definitions import defs
from tests.conftest import BUNDLED_LANDING

DATASETS = ("mind2web.train_demo", "the_wave.test_demo")
SPINE = dg.AssetSelection.groups("raw", "standardized")
BENCHMARK = dg.AssetSelection.assets("benchmark_snapshot", "eval_results")  # partitioned apart


@pytest.fixture(scope="module")
def pipeline():
    code_location = defs()
    return [*code_location.assets, *(code_location.asset_checks or [])]


@pytest.fixture
def built(pipeline, dagster_lake, ephemeral_instance):
    """Both bundled web datasets with the bundled predictions, then the leaderboard."""
    dagster_lake.add_bundled("mind2web", "train_demo", images=True)
    (dagster_lake.landing / "the_wave").mkdir()
    shutil.copy2(
        BUNDLED_LANDING / "the_wave" / "test_demo.jsonl", dagster_lake.landing / "the_wave"
    )
    shutil.copytree(BUNDLED_LANDING / "predictions", dagster_lake.landing / "predictions")
    for partitions in ("datasets", "benchmark_datasets"):
        ephemeral_instance.add_dynamic_partitions(partitions, list(DATASETS))

    def materialize(key, selection, run_config=None):
        return dg.materialize(
            pipeline, partition_key=key, instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource}, selection=selection,
            run_config=run_config, raise_on_error=False,
        )  # fmt: skip

    def run(key=None, selection=None, run_config=None):
        """The dataset's spine, then its benchmark (the result of that); or `selection`."""
        if selection is not None:
            return materialize(key, selection, run_config)
        spine = materialize(key, SPINE)
        return materialize(key, BENCHMARK, run_config) if spine.success else spine

    results = {key: run(key) for key in DATASETS}
    results["leaderboard"] = run(selection=dg.AssetSelection.assets("leaderboard"))
    return dagster_lake, results, run


def _metadata(result, asset):
    events = [e for e in result.get_asset_materialization_events() if e.asset_key.path == [asset]]
    return {
        k: v.value for k, v in events[-1].step_materialization_data.materialization.metadata.items()
    }


def test_snapshot_scores_and_leaderboard(built):
    lake, results, _ = built
    assert all(result.success for result in results.values())
    for key in DATASETS:
        checks = {c.check_name: c.passed for c in results[key].get_asset_check_evaluations()}
        assert checks["targets_among_choices"] and checks["snapshot_steps_unique"]
    wave = _metadata(results["the_wave.test_demo"], "benchmark_snapshot")
    # the-wave keeps only a screenshot with the answer marked: no step has one to show
    assert wave["dagster/row_count"] == 6 and wave["steps_with_screenshot"] == 0
    assert wave["invalid_by_reason"] == {"no_target": 1, "no_screenshot": 5}
    assert wave["text_only_valid_steps"] == 5 and wave["valid_steps"] == 0
    assert "_no screenshot to show_" in wave["preview"]
    shots = _metadata(results["mind2web.train_demo"], "benchmark_snapshot")
    assert shots["steps_with_screenshot"] == shots["valid_steps"] == 14
    assert "](data:image/webp;base64," in shots["preview"]  # the first step's, as a thumbnail
    mind2web = pq.read_metadata(lake.table("benchmark", "benchmark_snapshot", DATASETS[0]))
    assert wave["total_rows_all_partitions"] == 6 + mind2web.num_rows  # built second
    scores = _metadata(results["mind2web.train_demo"], "eval_results")
    assert scores["dagster/row_count"] == 28  # 14 steps x 2 models
    board = pq.read_table(lake.table("benchmark", "leaderboard", "all")).to_pylist()
    # the bundled predictions do not say they saw screenshots: the text-only mode
    assert {row["mode"] for row in board} == {"text"}
    rows = {(row["model"], row["split"]): row for row in board}
    assert set(rows) == {
        (m, s) for m in ("demo-careful", "demo-hasty") for s in ("train", "test", "all")
    }
    assert rows[("demo-careful", "all")]["steps"] == 19
    assert rows[("demo-careful", "all")]["invalid_steps"] == 1
    assert (
        rows[("demo-careful", "all")]["step_success_macro"]
        > rows[("demo-hasty", "all")]["step_success_macro"]
    )
    shown = _metadata(results["leaderboard"], "leaderboard")["leaderboard"]
    assert "| demo-careful | text | all | 19 |" in shown and "data:image/svg+xml;base64," in shown
    assert (lake.data / "benchmark" / "leaderboard.svg").read_text().startswith("<svg")


def test_rerun_gives_the_same_bytes_and_other_config_makes_predictions_stale(built):
    lake, _, run = built
    path = lake.table("benchmark", "benchmark_snapshot", "mind2web.train_demo")
    before = pq.read_table(path)
    assert run("mind2web.train_demo").success
    assert pq.read_table(path).equals(before)
    config = {"ops": {"benchmark_snapshot": {"config": {"k": 3, "seed": 7}}}}
    assert run("mind2web.train_demo", run_config=config).success
    assert {len(c) for c in pq.read_table(path)["candidates"].to_pylist()} <= {4}
    scores = pq.read_table(lake.table("benchmark", "eval_results", "mind2web.train_demo"))
    assert set(scores["status"].to_pylist()) == {"stale"}


def test_a_step_repeated_in_another_partition_fails_the_gate_and_targets_are_checked_per_partition(
    built,
):
    """A copy of mind2web's snapshot rows under another partition, their targets emptied: the
    steps gate (across partitions) names the repeats; the targets gate checks the partition the
    run builds, so the-wave's run does not answer for the copy's targets."""
    lake, _, run = built
    rows = pq.read_table(lake.table("benchmark", "benchmark_snapshot", DATASETS[0]))
    emptied = pa.array([[] for _ in range(rows.num_rows)], rows.schema.field("target_ids").type)
    copy = rows.set_column(rows.schema.get_field_index("target_ids"), "target_ids", emptied)
    pq.write_table(copy, lake.table("benchmark", "benchmark_snapshot", "mind2web.copy"))

    result = run("the_wave.test_demo", selection=BENCHMARK)
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    assert checks["targets_among_choices"].passed
    repeats = checks["snapshot_steps_unique"]
    assert not repeats.passed
    offenders = repeats.metadata["offenders"].value
    assert len(offenders) == min(rows.num_rows, 20)
    assert offenders[0]["datasets"] == [DATASETS[0], DATASETS[0]]  # the copy keeps its column
    assert repeats.metadata["partitions"].value == 3

    result = run("mind2web.train_demo", selection=BENCHMARK)  # its own partition, not the copy
    checks = {c.check_name: c.passed for c in result.get_asset_check_evaluations()}
    assert checks["targets_among_choices"]
