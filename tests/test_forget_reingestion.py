"""Re-ingesting a telemetry day after a forget request, through Dagster, before any erasure:
the raw step, the standardize step (from a raw table built before the request) and
`raw_telemetry` withhold the sender's records and count them; and the blocking check answers for
the run's own dataset, so a forgotten sender's rows waiting in one dataset fail no other."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pytest

from bigaction_assets.privacy.erasure import Forgotten
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.privacy.pseudonyms import DEV_KEY, Pseudonymizer
from bigaction_assets.privacy.register import table_offenders
from bigaction_assets.privacy.withhold import WITHHELD
from bigaction_assets.telemetry.sample import land_sample
from bigaction_assets.telemetry_batches import batch_files

DEV = Pseudonymizer(DEV_KEY.encode("utf-8"), dev=True)
ANA = DEV.user("ana.garcia@example.org")  # 3 of the sample's 9 stored steps
DAY = "telemetry.2025-05-14"
PUBLIC = "adp.synatra"
RAW = dg.AssetSelection.assets("raw_records")
STANDARDIZE = dg.AssetSelection.groups("standardized")
RAW_CHECK = dg.AssetCheckKey(dg.AssetKey("raw_records"), "forgotten_users_absent")


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    from bigaction_assets.definitions import defs

    with dg.DagsterInstance.ephemeral():  # as conftest's `graph`: under a live instance
        return defs()


@pytest.fixture
def lake(dagster_lake, ephemeral_instance):
    """The sample landed and a public dataset beside it, both registered as partitions."""
    land_sample(dagster_lake.landing, DEV)
    dagster_lake.add_bundled("adp", "synatra")
    ephemeral_instance.add_dynamic_partitions("datasets", [DAY, PUBLIC])
    return dagster_lake


def build(graph, lake, instance, selection, partition: str | None = None, **kwargs: Any):
    return dg.materialize(
        graph, instance=instance, resources={"lake": lake.resource}, selection=selection,
        partition_key=partition, raise_on_error=False, **kwargs,
    )  # fmt: skip


def metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, Any]:
    # a ranged run materializes each partition with the same metadata: the first says it
    made = next(m for m in result.get_asset_materialization_events()
                if m.asset_key == dg.AssetKey(asset))  # fmt: skip
    return {k: getattr(v, "value", v) for k, v in made.materialization.metadata.items()}


def held(lake, group: str, asset: str, partition: str = DAY) -> list[dict[str, Any]]:
    return table_offenders(lake.root, group, asset, Forgotten(frozenset({ANA})), [partition])


def test_the_raw_step_withholds_a_forgotten_senders_records(graph, lake, ephemeral_instance):
    record_request(lake.landing, ANA, via="cli")  # asked, not yet erased: the landing holds her

    result = build(graph, lake, ephemeral_instance, RAW | STANDARDIZE, DAY)

    assert result.success
    assert metadata(result, "raw_records")[WITHHELD] == 3
    assert metadata(result, "raw_records")["dagster/row_count"] == 6
    for group, asset in [("raw", "raw_records"), ("standardized", "episodes"),
                         ("standardized", "events"), ("standardized", "rejects")]:  # fmt: skip
        assert held(lake, group, asset) == [], asset


def test_the_standardize_step_withholds_them_from_a_raw_table_built_before(
    graph, lake, ephemeral_instance
):
    assert build(graph, lake, ephemeral_instance, RAW, DAY).success
    assert held(lake, "raw", "raw_records") == [{"file": f"{DAY}.parquet", "rows": 3}]
    record_request(lake.landing, ANA, via="cli")

    result = build(graph, lake, ephemeral_instance, STANDARDIZE, DAY)

    assert result.success
    assert metadata(result, "episodes")["input_tallies"] == {WITHHELD: 3}
    assert (
        held(lake, "standardized", "episodes") == [] and held(lake, "standardized", "events") == []
    )


def test_raw_telemetry_counts_the_steps_it_withholds(graph, lake, ephemeral_instance):
    record_request(lake.landing, ANA, via="cli")
    batches = sorted(batch_files(lake.landing))
    ephemeral_instance.add_dynamic_partitions("telemetry_batches", batches)
    ranged = {"dagster/asset_partition_range_start": batches[0],
              "dagster/asset_partition_range_end": batches[-1]}  # fmt: skip

    result = build(graph, lake, ephemeral_instance, dg.AssetSelection.assets("raw_telemetry"),
                   tags=ranged)  # fmt: skip

    assert result.success and metadata(result, "raw_telemetry")[WITHHELD] == 3
    assert metadata(result, "raw_telemetry")["dagster/row_count"] == 6


def test_one_datasets_forgotten_rows_fail_no_other_datasets_check(
    graph, code_location, lake, ephemeral_instance
):
    for partition in (DAY, PUBLIC):
        assert build(graph, lake, ephemeral_instance, RAW, partition).success
    record_request(lake.landing, ANA, via="cli")  # her rows wait in the day until it is erased

    def check(job: str, partition: str | None = None) -> dg.ExecuteInProcessResult:
        """The check alone, in the job that runs it: a dataset's build, or the forget job."""
        subset = code_location.resolve_job_def(job).get_subset(
            asset_selection=set(), asset_check_selection={RAW_CHECK}
        )
        return subset.execute_in_process(
            instance=ephemeral_instance, resources={"lake": lake.resource},
            partition_key=partition, raise_on_error=False,
        )  # fmt: skip

    public, day = check("build_dataset", PUBLIC), check("build_dataset", DAY)
    everything = check("forget_users")  # a run without partitions looks at every one
    [passed] = public.get_asset_check_evaluations()
    assert passed.passed and passed.metadata["partitions_checked"].value == PUBLIC
    for run in (day, everything):
        [failed] = run.get_asset_check_evaluations()
        assert not failed.passed
        assert failed.metadata["offenders"].value == [{"file": f"{DAY}.parquet", "rows": 3}]
    assert public.success, "and the public dataset's run goes on"
