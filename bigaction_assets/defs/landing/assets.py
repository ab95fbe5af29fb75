"""The landing folder's files that nothing reads, as a table and a warning."""

from collections import Counter
from datetime import UTC, datetime

import dagster as dg

from bigaction_assets import unread
from bigaction_assets.defs.metadata import column_schema, markdown_preview
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import read_arrow
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.schemas import arrow_schema, validated_table
from bigaction_assets.schemas.raw import UnreadLandingFileSchema
from bigaction_assets.sources import adapters

GROUP = "landing"
ASSET = "unread_landing_files"
UNREAD_VERSION = "1"
PREVIEW_ROWS = 20


def _first_seen(lake: Lake) -> dict[str, str]:
    """When the table last written first listed each file: kept, so a rerun changes no byte."""
    if not partition_exists(lake, GROUP, ASSET, "all"):
        return {}
    table = read_arrow(lake, GROUP, ASSET, "all", columns=["path", "first_seen"])
    return dict(zip(table["path"].to_pylist(), table["first_seen"].to_pylist(), strict=True))


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    code_version=UNREAD_VERSION,
    metadata={"dagster/column_schema": column_schema(UnreadLandingFileSchema)},
)
def unread_landing_files(
    context: dg.AssetExecutionContext, lake: LakeResource
) -> dg.MaterializeResult:
    """One row per landing file no adapter (nor another stage) reads, or that cannot be opened:
    a folder no adapter owns, an ending its adapter does not read, a damaged Parquet file."""
    files = unread.unread_files(lake.landing, adapters())
    seen = _first_seen(lake.store)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    rows = [
        {"path": f.path, "size": f.size, "reason": f.reason, "detail": f.detail,
         "first_seen": seen.get(f.path, now)}
        for f in files
    ]  # fmt: skip
    for file in files:
        context.log.warning(f"landing file not read: {file.path} ({file.reason}: {file.detail})")
    schema = arrow_schema(UnreadLandingFileSchema)
    with open_partition(lake.store, GROUP, ASSET, "all", schema) as writer:
        writer.write(validated_table(UnreadLandingFileSchema, rows))
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "unread_by_reason": dict(Counter(f.reason for f in files)),
            "preview": dg.MetadataValue.md(markdown_preview(rows[:PREVIEW_ROWS])),
            "path": dg.MetadataValue.path(str(writer.final_path)),
        }
    )


@dg.asset_check(asset=unread_landing_files, blocking=False)
def landing_files_all_read(lake: LakeResource) -> dg.AssetCheckResult:
    """Every landing file is read by some adapter or stage (a warning otherwise: nothing
    downstream is wrong, but data someone landed is not getting in)."""
    table = read_arrow(lake.store, GROUP, ASSET, "all", columns=["path"])
    paths = table["path"].to_pylist()
    return dg.AssetCheckResult(
        passed=not paths,
        severity=dg.AssetCheckSeverity.WARN,
        description=f"{len(paths)} landing files are not read" if paths else None,
        metadata={"unread": len(paths), "first": paths[:PREVIEW_ROWS]},
    )
