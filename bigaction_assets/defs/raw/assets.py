"""The raw layer: every landing record, untouched, in a typed envelope."""

from collections import Counter

import dagster as dg

from bigaction_assets import ingest
from bigaction_assets.defs.metadata import markdown_preview
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import open_partition
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.raw import RawRecordSchema
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.sources import split_partition_key

RAW_VERSION = "1"


@dg.asset(
    group_name="raw",
    kinds={"python", "parquet"},
    partitions_def=datasets_partitions,
    code_version=RAW_VERSION,
)
def raw_records(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per record of a landing dataset, exactly as written, with read errors marked."""
    adapter, dataset = split_partition_key(context.partition_key)
    files = ingest.dataset_files(lake.landing, adapter, dataset)
    errors: Counter[str] = Counter()
    preview: list[dict] = []
    schema = arrow_schema(RawRecordSchema)
    with (
        open_partition(lake.root, "raw", "raw_records", context.partition_key, schema) as writer,
        ingest.collection_paused(),
    ):
        sink = ValidatedSink(RawRecordSchema, writer, max_chars=ingest.SINK_CHARS)
        for row in ingest.raw_records(adapter, dataset, files, lake.landing):
            sink.add(row)
            if row["error"]:
                errors[row["error"]] += 1
            if len(preview) < 5:
                preview.append({k: row[k] for k in ("file", "line", "record_id", "error")})
        sink.flush()
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            "files": [str(path) for path in files],
            "input_bytes": sum(path.stat().st_size for path in files),
            "landing_fingerprint": ingest.fingerprint(files),
            "unreadable_by_reason": dict(errors),
            "preview": dg.MetadataValue.md(markdown_preview(preview)),
            "path": dg.MetadataValue.path(str(writer.final_path)),
        }
    )
