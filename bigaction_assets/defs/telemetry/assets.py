"""The telemetry stage: the raw layer, one partition per batch the collector landed (each
ingested once, what cannot be stored kept as rejects), and the daily report across them."""

from collections import Counter
from collections.abc import Iterator
from typing import Any

import dagster as dg
import orjson

from bigaction_assets.defs.metadata import column_schema, markdown_preview
from bigaction_assets.defs.partitions import telemetry_batches
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_sql import query_connection
from bigaction_assets.lake_writer import write_partition
from bigaction_assets.privacy.register import forgotten_pseudonyms
from bigaction_assets.privacy.withhold import WITHHELD
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.telemetry import (
    RawTelemetrySchema,
    TelemetryRejectSchema,
    TelemetryReportSchema,
)
from bigaction_assets.sink import PendingPartitions
from bigaction_assets.telemetry.raw import BatchRead, daily_report, read_batch
from bigaction_assets.telemetry_batches import batch_day, batch_files

RAW_TELEMETRY_VERSION = "1"
GROUP = "telemetry"
REJECTS = "telemetry_rejects"


@dg.multi_asset(
    name="raw_telemetry_batches",
    specs=[
        dg.AssetSpec(
            "raw_telemetry",
            description="One row per stored step of a landed batch: pseudonymized, "
            "level-filtered, scrubbed.",
            group_name=GROUP,
            kinds={"python", "parquet"},
            code_version=RAW_TELEMETRY_VERSION,
            metadata={"dagster/column_schema": column_schema(RawTelemetrySchema)},
            skippable=True,
        ),
        dg.AssetSpec(
            REJECTS,
            description="One row per landed line (or batch file) raw_telemetry could not "
            "store, with why.",
            group_name=GROUP,
            kinds={"python", "parquet"},
            code_version=RAW_TELEMETRY_VERSION,
            metadata={"dagster/column_schema": column_schema(TelemetryRejectSchema)},
            skippable=True,
        ),
    ],
    partitions_def=telemetry_batches,
    backfill_policy=dg.BackfillPolicy.single_run(),
    can_subset=True,
)
def raw_telemetry(
    context: dg.AssetExecutionContext, lake: LakeResource
) -> Iterator[dg.MaterializeResult]:
    """Landed batches into the raw layer: their rows, and a reject row for each line (or file)
    that cannot be stored, so a damaged batch never holds back the others."""
    files = batch_files(lake.landing)
    # asked to be forgotten (perhaps not yet erased): their steps are withheld, and counted
    forgotten = forgotten_pseudonyms(lake.store, lake.landing)
    withheld: Counter[str] = Counter()
    levels: Counter[str] = Counter()
    scrubbed: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    senders: set[str] = set()
    gone, preview, dev_steps = [], [], 0
    rejects: dict[str, list[dict[str, Any]]] = {}
    refused_batches: list[str] = []

    def refused(partition: str, error: Exception) -> None:  # the contract refused the batch
        refused_batches.append(partition)
        detail = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        rejects.setdefault(partition, []).append(
            {
                "batch_id": partition,
                "day": batch_day(partition),
                "line": None,
                "reason": "unstorable",
                "detail": detail,
            }
        )
        context.log.warning(
            f"batch {partition} refused by the raw_telemetry contract; see {REJECTS}"
        )

    # one run takes every batch a sensor tick found: batches are validated many at a time
    # (a contract check costs ~20 ms however few the rows), each written to its own partition
    pending = PendingPartitions(lake.store, GROUP, "raw_telemetry", RawTelemetrySchema, refused)
    for key in context.partition_keys:
        if key not in files:
            gone.append(key)  # erased whole after a forget request: the partition is empty
        read = read_batch(key, files[key], forgotten, withheld) if key in files else BatchRead()
        rejects[key] = read.rejects
        for row in read.rows:
            levels[row["level"]] += 1
            scrubbed.update(orjson.loads(row["scrubbed"]))
            senders.add(row["user_pseudonym"])
            dev_steps += row["dev_key"]
            if len(preview) < 5:
                preview.append({c: row[c] for c in ("batch_id", "step", "level", "scrubbed")})
        pending.add(key, read.rows)
    pending.flush()
    selected = {key.path[-1] for key in context.selected_asset_keys}
    if REJECTS in selected:
        kept = PendingPartitions(lake.store, GROUP, REJECTS, TelemetryRejectSchema)
        for key in context.partition_keys:
            kept.add(key, rejects[key])
        kept.flush()
    for rows in rejects.values():
        reasons.update(row["reason"] for row in rows)
    if reasons:
        context.log.warning(f"{sum(reasons.values())} landed lines not stored: {dict(reasons)}")
    lake.refresh_catalog(context.log)
    if "raw_telemetry" in selected:
        yield dg.MaterializeResult(
            asset_key="raw_telemetry",
            metadata={
                "dagster/row_count": sum(levels.values()),
                "batches": len(context.partition_keys),
                "batches_erased": len(gone),
                "batches_refused_whole": len(refused_batches),
                "steps_by_level": dict(sorted(levels.items())),
                "scrubbed_by_kind": dict(sorted(scrubbed.items())),
                "senders": len(senders),
                WITHHELD: withheld.total(),
                "dev_key_steps": dev_steps,
                "rejects_by_reason": dict(sorted(reasons.items())),
                "preview": dg.MetadataValue.md(markdown_preview(preview)),
            },
        )
    if REJECTS in selected:
        shown = [{c: r[c] for c in ("batch_id", "line", "reason", "detail")}
                 for rows in rejects.values() for r in rows][:5]  # fmt: skip
        yield dg.MaterializeResult(
            asset_key=REJECTS,
            metadata={
                "dagster/row_count": sum(reasons.values()),
                "rejects_by_reason": dict(sorted(reasons.items())),
                "preview": dg.MetadataValue.md(markdown_preview(shown)),
            },
        )


@dg.asset(
    group_name="telemetry",
    kinds={"duckdb", "parquet"},
    deps=["raw_telemetry"],
    code_version="1",
    metadata={"dagster/column_schema": column_schema(TelemetryReportSchema)},
)
def telemetry_report(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per UTC day of telemetry: batches, steps, senders, levels, what was scrubbed."""
    with query_connection(lake.store) as con:
        rows = daily_report(con, lake.store)
    report = frame(TelemetryReportSchema, rows)
    write_partition(lake.store, "telemetry", "telemetry_report", "all", report)
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": report.height,
            "report": dg.MetadataValue.md(markdown_preview(rows[-14:])),
        }
    )
