"""Landed telemetry batches become partitions as they arrive; each finished day is built once."""

from datetime import timedelta

import dagster as dg

from bigaction_assets.defs.jobs import execution_config, telemetry_batches_job, telemetry_day_job
from bigaction_assets.defs.partitions import datasets_partitions, telemetry_batches
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.sources import partition_key
from bigaction_assets.telemetry_batches import ADAPTER, batch_day, batch_files


@dg.sensor(
    job=telemetry_batches_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def telemetry_batches_sensor(
    context: dg.SensorEvaluationContext, lake: LakeResource
) -> dg.SensorResult | dg.SkipReason:
    """Registers new landed batches (and their days) as partitions; one run ingests them all."""
    known = set(context.instance.get_dynamic_partitions(telemetry_batches.name))
    new = [key for key in batch_files(lake.landing) if key not in known]
    if not new:
        return dg.SkipReason("no new telemetry batches")
    days = {partition_key(ADAPTER, batch_day(key)) for key in new}
    known_days = set(context.instance.get_dynamic_partitions(datasets_partitions.name))
    range_tags = {
        "dagster/asset_partition_range_start": new[0],
        "dagster/asset_partition_range_end": new[-1],
    }
    new_days = sorted(days - known_days)
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"{new[0]}..{new[-1]}", tags=range_tags)],
        dynamic_partitions_requests=[
            telemetry_batches.build_add_request(new),
            *([datasets_partitions.build_add_request(new_days)] if new_days else []),
        ],
    )


@dg.schedule(
    job=telemetry_day_job,
    cron_schedule="30 0 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
def telemetry_daily_schedule(
    context: dg.ScheduleEvaluationContext, lake: LakeResource
) -> dg.RunRequest | dg.SkipReason:
    """After midnight UTC, compacts yesterday's batches and builds its episodes and report."""
    day = (context.scheduled_execution_time - timedelta(days=1)).strftime("%Y-%m-%d")
    key = partition_key(ADAPTER, day)
    if not context.instance.has_dynamic_partition(datasets_partitions.name, key):
        return dg.SkipReason(f"no telemetry landed on {day}")
    landed = sum(
        p.stat().st_size for b, p in batch_files(lake.landing).items() if batch_day(b) == day
    )
    return dg.RunRequest(run_key=key, partition_key=key, run_config=execution_config(landed))
