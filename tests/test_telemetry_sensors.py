"""The telemetry stage's triggers: new landed batches become partitions and one run each time
(never twice), a new set of forget requests starts the erasure once, and the daily schedule
builds yesterday only when telemetry landed that day."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg

from bigaction_assets.defs.privacy.sensors import forget_requests_sensor
from bigaction_assets.defs.telemetry.sensors import (
    telemetry_batches_sensor,
    telemetry_daily_schedule,
)
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.telemetry.intake import land_records
from bigaction_assets.telemetry_batches import new_batch_id

PSEUDONYMS = Pseudonymizer(b"sensor-test-key-0123456789")
DAY = "telemetry.2025-05-14"
START, END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def land(landing, minute: int) -> str:
    """One landed batch of one LOW step, arrived on 2025-05-14 at 10:<minute>."""
    arrived = datetime(2025, 5, 14, 10, minute, tzinfo=UTC)
    batch_id = new_batch_id(arrived, nonce=f"{minute:012x}")
    step = {"user_id": "u", "run_id": f"r{minute}", "step": 0, "level": "LOW", "version": "1"}
    land_records(landing, [step], PSEUDONYMS, batch_id, arrived.isoformat())
    return batch_id


def tick(sensor: dg.SensorDefinition, instance: dg.DagsterInstance, lake, cursor=None):
    context = dg.build_sensor_context(instance=instance, resources={"lake": lake}, cursor=cursor)
    return sensor(context), context


def test_new_batches_are_registered_and_ingested_once(dagster_lake, ephemeral_instance) -> None:
    lake = dagster_lake.resource
    first = [land(dagster_lake.landing, m) for m in (1, 2, 3)]
    result, _ = tick(telemetry_batches_sensor, ephemeral_instance, lake)
    [run] = result.run_requests
    assert (run.tags[START], run.tags[END]) == (first[0], first[-1])
    added = {r.partitions_def_name: r.partition_keys for r in result.dynamic_partitions_requests}
    assert added == {"telemetry_batches": first, "datasets": [DAY]}
    for name, keys in added.items():  # what the daemon does with the requests
        ephemeral_instance.add_dynamic_partitions(name, keys)

    again, _ = tick(telemetry_batches_sensor, ephemeral_instance, lake)
    assert isinstance(again, dg.SkipReason), "a batch already registered is not run again"

    later = land(dagster_lake.landing, 4)
    result, _ = tick(telemetry_batches_sensor, ephemeral_instance, lake)
    [run] = result.run_requests
    assert (
        run.tags["dagster/asset_partition_range_start"]
        == later
        == run.tags["dagster/asset_partition_range_end"]
    )
    assert [r.partition_keys for r in result.dynamic_partitions_requests] == [[later]]


def test_each_new_set_of_forget_requests_starts_one_erasure(dagster_lake, ephemeral_instance):
    lake = dagster_lake.resource
    assert isinstance(tick(forget_requests_sensor, ephemeral_instance, lake)[0], dg.SkipReason)
    record_request(dagster_lake.landing, PSEUDONYMS.user("a"), via="api")
    run, context = tick(forget_requests_sensor, ephemeral_instance, lake)
    assert isinstance(run, dg.RunRequest) and run.run_key.startswith("forget-")
    same, _ = tick(forget_requests_sensor, ephemeral_instance, lake, cursor=context.cursor)
    assert isinstance(same, dg.SkipReason)
    record_request(dagster_lake.landing, PSEUDONYMS.user("b"), via="cli")
    new, _ = tick(forget_requests_sensor, ephemeral_instance, lake, cursor=context.cursor)
    assert isinstance(new, dg.RunRequest) and new.run_key != run.run_key


def test_the_daily_schedule_builds_yesterday_only_when_it_landed(dagster_lake) -> None:
    after_midnight = datetime(2025, 5, 15, 0, 30, tzinfo=UTC)
    land(dagster_lake.landing, 1)
    with (
        dg.instance_for_test() as instance,
        dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=after_midnight,
            resources={"lake": dagster_lake.resource},
        ) as context,
    ):
        assert isinstance(telemetry_daily_schedule(context), dg.SkipReason)
        instance.add_dynamic_partitions("datasets", [DAY])
        request = telemetry_daily_schedule(context)
    assert isinstance(request, dg.RunRequest)
    assert request.partition_key == DAY and request.run_key == DAY
    # one small batch: the day's run goes in one process
    assert request.run_config == {"execution": {"config": {"in_process": {}}}}
