"""The raw layer: every landing record as written, in a typed envelope (its pages kept once)."""

from collections import Counter
from contextlib import nullcontext
from typing import Any

import dagster as dg

from bigaction_assets import ingest, staging
from bigaction_assets.defs.metadata import markdown_preview, totals_across_partitions
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.standardized.assets import GROUP, STANDARDIZE_VERSION, TABLES
from bigaction_assets.gc_pause import collection_paused
from bigaction_assets.heap_reuse import freed_memory_kept
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.privacy.withhold import WITHHELD, sender_filter
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.raw import RawPageSchema, RawRecordSchema
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.sources import split_partition_key

RAW_VERSION = "2"  # 2: pages cut out of the records into raw_pages


@dg.asset(
    group_name="raw",
    kinds={"python", "parquet"},
    partitions_def=datasets_partitions,
    code_version=RAW_VERSION,
)
def raw_records(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per record of a landing dataset, exactly as written, with read errors marked;
    the pages a record holds are kept once, in raw_pages, and put back when it is read."""
    adapter, dataset = split_partition_key(context.partition_key)
    files = ingest.dataset_files(lake.landing, adapter, dataset)
    # records of senders who asked to be forgotten never reach the lake again (counted)
    withhold = sender_filter(adapter, lake.store, lake.landing)
    errors: Counter[str] = Counter()
    preview: list[dict] = []
    key = context.partition_key
    with (
        open_partition(lake.store, "raw", "raw_pages", key, arrow_schema(RawPageSchema)) as pages,
        open_partition(
            lake.store, "raw", "raw_records", key, arrow_schema(RawRecordSchema)
        ) as writer,
        collection_paused(),
        freed_memory_kept(),  # each multi-megabyte record's parse reuses the last one's memory
    ):
        page_sink = ValidatedSink(
            RawPageSchema, pages, max_rows=ingest.SINK_ROWS, max_chars=ingest.SINK_CHARS
        )
        # Standardize in this same pass (see `staging`), except records of people, which must
        # not sit anywhere an erasure does not look (the standardize step then reads the raw
        # table); the pages that pass meets go to `raw_pages`, cut out of the records' texts.
        staged = (
            None
            if getattr(adapter, "holds_personal_data", False)
            else staging.StagedTables(
                lake.store,
                GROUP,
                key,
                {name: (model, columns) for name, (model, _, columns) in TABLES.items()},
                STANDARDIZE_VERSION,
                page_sink,
            )
        )
        sink = ValidatedSink(RawRecordSchema, writer, max_chars=ingest.SINK_CHARS)

        def add(row: dict[str, Any]) -> None:
            sink.add(row)
            if row["error"]:
                errors[row["error"]] += 1
            if len(preview) < 5:
                preview.append({k: row[k] for k in ("file", "line", "record_id", "error")})

        with staged or nullcontext():
            staging.read_and_stage(adapter, dataset, files, lake.landing, add, staged, withhold)
            sink.flush()
            page_sink.flush()
    if staged is not None:
        staged.finish()
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            "raw_pages": page_sink.total,
            **totals_across_partitions(lake, "raw", "raw_records"),
            "files": [str(path) for path in files],
            "input_bytes": sum(path.stat().st_size for path in files),
            "landing_fingerprint": ingest.dataset_fingerprint(
                lake.landing, context.partition_key, files
            ),
            "unreadable_by_reason": dict(errors),
            WITHHELD: withhold.withheld,
            "preview": dg.MetadataValue.md(markdown_preview(preview)),
            "path": dg.MetadataValue.path(str(writer.final_path)),
        }
    )
