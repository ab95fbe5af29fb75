"""What the automation sensor asks for, tick by tick, after the landing sensor's run of a dataset.

The conditions are evaluated the way the daemon evaluates them (`evaluate_automation_conditions`
on the code location's assets), against an instance where the runs really happened.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest

from bigaction_assets.definitions import defs

KEY = "adp.synatra"
DAY = "telemetry.2025-05-14"
# a telemetry day's run (build_telemetry_day, less its report) leaves the SFT files to automation
SPINE = dg.AssetSelection.groups("raw", "standardized") | dg.AssetSelection.assets(
    "thoughts", "sft_examples"
)


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    return defs()


@pytest.fixture
def setup(code_location, dagster_lake, ephemeral_instance):
    dagster_lake.add_bundled("adp", "synatra")
    for partitions in ("datasets", "benchmark_datasets"):
        ephemeral_instance.add_dynamic_partitions(partitions, [KEY])
    location = dg.Definitions(
        assets=code_location.assets,
        asset_checks=code_location.asset_checks,
        resources={"lake": dagster_lake.resource},
    )
    pipeline = [*code_location.assets, *code_location.asset_checks]

    def build(selection: dg.AssetSelection, partition: str | None = None) -> None:
        result = dg.materialize(
            pipeline, partition_key=partition, instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource}, selection=selection,
        )  # fmt: skip
        assert result.success

    return location, ephemeral_instance, build


def landing_run(code_location: dg.Definitions) -> dg.AssetSelection:
    """What the landing sensor's run (build_dataset) builds, as the code location says."""
    job = code_location.resolve_job_def("build_dataset")
    return dg.AssetSelection.assets(*job.asset_layer.selected_asset_keys)


class Ticks:
    """Successive evaluations, each carrying the previous one's cursor, as the daemon does."""

    def __init__(self, location: dg.Definitions, instance: dg.DagsterInstance) -> None:
        self.location, self.instance, self.cursor = location, instance, None

    def __call__(self) -> dict[str, Any]:
        result = dg.evaluate_automation_conditions(
            defs=self.location, instance=self.instance, cursor=self.cursor
        )
        self.cursor = result.cursor
        requested = {}
        for key in self.location.resolve_asset_graph().get_all_asset_keys():
            partitions = result.get_requested_partitions(key)
            if partitions:
                requested[key.to_user_string()] = sorted(p or "-" for p in partitions)
        return requested


def test_a_built_dataset_flows_to_the_end_but_the_push_waits_for_a_person(
    setup, code_location
) -> None:
    location, instance, build = setup
    tick = Ticks(location, instance)
    assert tick() == {}, "nothing is built on an empty lake"

    build(landing_run(code_location), KEY)  # the landing sensor's run, SFT files included
    requested = tick()
    assert requested == {
        "benchmark_snapshot": [KEY], "model_answers": [KEY], "eval_results": [KEY],
        "hub_release": ["-"],
    }, "the SFT files were written by the run itself: not again"  # fmt: skip
    assert tick() == {}, "asked once, not at every tick"

    build(dg.AssetSelection.assets("benchmark_snapshot", "model_answers", "eval_results"), KEY)
    build(dg.AssetSelection.assets("hub_release"))
    assert tick() == {"leaderboard": ["-"]}  # its input, the scores, changed
    build(dg.AssetSelection.assets("leaderboard"))
    assert tick() == {}
    # never `hub_revision`: the release reaches the Hub only when someone launches it


def test_a_telemetry_day_not_built_yet_holds_nothing_back(setup) -> None:
    """A day is registered as its batches land and built after midnight: until then its
    partitions are missing, and the SFT files and release still follow every other dataset
    (built here without its SFT files, as a telemetry day's run or the README's command is)."""
    location, instance, build = setup
    instance.add_dynamic_partitions("datasets", [DAY])
    tick = Ticks(location, instance)
    tick()
    build(SPINE, KEY)
    requested = tick()
    assert requested["sft_files"] == ["-"] and requested["hub_release"] == ["-"]
    assert DAY not in requested["benchmark_snapshot"]
