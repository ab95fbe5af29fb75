"""The standardized lake: episodes, events, pages, candidates and rejects, per dataset."""

import itertools
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import dagster as dg
import pandera.polars as pandera

from bigaction_assets import ingest, staging, standardized_rows
from bigaction_assets.defs.metadata import (
    column_schema,
    image_thumbnail,
    markdown_preview,
    totals_across_partitions,
)
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.gc_pause import collection_paused
from bigaction_assets.heap_reuse import freed_memory_kept
from bigaction_assets.images.events import TALLY_PREFIX
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.lake_reader import read_partition
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.privacy.withhold import WITHHELD, sender_filter
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.images import ImageSchema
from bigaction_assets.schemas.standardized import (
    DomSnapshotSchema,
    EpisodeSchema,
    EventSchema,
    RejectSchema,
    WebCandidateSchema,
)
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.sources import split_partition_key
from bigaction_assets.sources.base import SourceAdapter

STANDARDIZE_VERSION = "5"  # 2: events.source renamed actor; 3: task_completed, thought_source;
# 4: a task that an opening message states; 5: images, and events pointing at them by hash
GROUP = "standardized"
PREVIEW_ROWS = 5
# Texts a preview leaves out for sources whose adapter `holds_personal_data` (telemetry): run
# metadata lives in Dagster's event log, which forgetting a sender cannot rewrite.
PERSONAL_COLUMNS = frozenset({"task", "content", "detail"})
# table -> (contract, description shown in the UI, columns shown in the preview)
TABLES: dict[str, tuple[type[pandera.DataFrameModel], str, tuple[str, ...]]] = {
    "episodes": (
        EpisodeSchema,
        "One row per episode: a task attempted from start to end.",
        ("episode_id", "source", "task", "num_events"),
    ),
    "events": (
        EventSchema,
        "One row per (episode, idx): an observation or an action, in order.",
        ("episode_id", "idx", "kind", "function", "content"),
    ),
    "dom_snapshots": (
        DomSnapshotSchema,
        "One row per distinct page (html_sha): HTML stored once however often it was seen.",
        ("html_sha", "raw_bytes"),
    ),
    "images": (
        ImageSchema,
        "One row per distinct image (image_sha) an event points at: bytes stored once.",
        ("image_sha", "format", "width", "height", "byte_size", "location"),
    ),
    "web_candidates": (
        WebCandidateSchema,
        "One row per (episode, step, element): the candidates offered at a web step.",
        ("episode_id", "step", "backend_node_id", "tag", "positive"),
    ),
    "rejects": (
        RejectSchema,
        "One row per input record that could not be standardized, with its reason.",
        ("file", "line", "stage", "reason", "detail"),
    ),
}


@dg.multi_asset(
    name="standardize_dataset",
    specs=[
        dg.AssetSpec(
            name,
            description=description,
            group_name=GROUP,
            kinds={"python", "parquet"},
            deps=["raw_records"],
            code_version=STANDARDIZE_VERSION,
            metadata={"dagster/column_schema": column_schema(model)},
        )
        for name, (model, description, _) in TABLES.items()
    ],
    partitions_def=datasets_partitions,
)
def standardized_tables(
    context: dg.AssetExecutionContext, lake: LakeResource
) -> Iterator[dg.MaterializeResult]:
    """Maps one dataset's raw records to the standardized tables through its source adapter."""
    adapter, dataset = split_partition_key(context.partition_key)
    key = context.partition_key
    # The raw step standardized the records in its own pass when it could (see `staging`).
    staged = staging.take(lake.store, GROUP, key, list(TABLES), STANDARDIZE_VERSION)
    if staged is None:
        totals, previews, reasons, tallies = _standardize_raw_table(lake, adapter, dataset, key)
    else:
        totals, previews = staged["totals"], staged["previews"]
        reasons, tallies = Counter(staged["rejects_by_reason"]), Counter(staged["tallies"])
    lake.refresh_catalog(context.log)
    input_tallies = {k: v for k, v in sorted(tallies.items()) if not k.startswith(TALLY_PREFIX)}
    image_outcomes = {
        k.removeprefix(TALLY_PREFIX): v
        for k, v in sorted(tallies.items())
        if k.startswith(TALLY_PREFIX)
    }
    hidden = PERSONAL_COLUMNS if getattr(adapter, "holds_personal_data", False) else frozenset()
    for name, (_, _, preview_columns) in TABLES.items():
        shown = [c for c in preview_columns if c not in hidden]
        preview = [{c: row.get(c) for c in shown} for row in previews[name]]
        metadata: dict[str, Any] = {
            "dagster/row_count": totals[name],
            **totals_across_partitions(lake, GROUP, name),
            "preview": dg.MetadataValue.md(markdown_preview(preview)),
        }
        if name in ("episodes", "rejects"):
            metadata["rejects_by_reason"] = dict(reasons)
        if name == "episodes" and input_tallies:  # what the adapter counted beyond rows, rejects
            metadata["input_tallies"] = input_tallies
        if name in ("events", "images"):  # each image reference: stored, or why not
            metadata["images_by_outcome"] = image_outcomes
        if name == "images" and totals[name]:  # a sample, small: the preview stays light
            shown = f"{metadata['preview'].value}\n\n{image_thumbnail(lake.store, key)}"
            metadata["preview"] = dg.MetadataValue.md(shown)
        yield dg.MaterializeResult(asset_key=name, metadata=metadata)


def _standardize_raw_table(
    lake: LakeResource, adapter: SourceAdapter, dataset: str, key: str
) -> tuple[dict[str, int], dict[str, list[dict[str, Any]]], Counter[str], Counter[str]]:
    """Standardize the raw partition into the tables; their row counts, previews, rejects by
    reason and the adapter's tallies."""
    previews: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    reasons: Counter[str] = Counter()
    tallies: Counter[str] = Counter()
    with ExitStack() as stack:
        stack.enter_context(collection_paused())
        stack.enter_context(freed_memory_kept())  # each record's parse reuses the last one's memory
        sinks = {
            name: ValidatedSink(
                model,
                stack.enter_context(
                    open_partition(lake.store, GROUP, name, key, arrow_schema(model))
                ),
                max_rows=ingest.SINK_ROWS,
                max_chars=ingest.SINK_CHARS,
            )
            for name, (model, _, _) in TABLES.items()
        }
        index = read_partition(lake.store, "raw", "raw_records", key, ["record_id", "error"])
        # a raw table built before a forget request (and not yet erased) still holds the
        # sender's records: they are withheld here too, and counted
        withhold = sender_filter(adapter, lake.store, lake.landing)
        rows = itertools.chain(
            standardized_rows.unreadable_rejects(
                adapter,
                dataset,
                withhold.keep(ingest.raw_partition_rows(lake.store, key, unreadable=True)),
            )
            if index["error"].null_count() < index.height
            else (),
            standardized_rows.standardize(
                adapter,
                dataset,
                withhold.keep(ingest.raw_partition_rows(lake.store, key, unreadable=False)),
                standardized_rows.repeated_ids(index["record_id"]),
                ImageResolver(lake.landing, adapter.name, dataset),
            ),
        )
        for row in rows:
            if row.table == standardized_rows.TALLIES:
                tallies[row.values["name"]] += row.values["count"]
                continue
            sinks[row.table].add(row.values)
            if row.table == "rejects":
                reasons[row.values["reason"]] += 1
            if len(previews[row.table]) < PREVIEW_ROWS:
                previews[row.table].append(row.values)
        for sink in sinks.values():
            sink.flush()
    if withhold:
        tallies[WITHHELD] += withhold.withheld
    return {name: sink.total for name, sink in sinks.items()}, previews, reasons, tallies
