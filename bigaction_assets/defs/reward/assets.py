"""Reward stage: items to label into the app's store, its labels into the lake, and the reward
training sets (judge conversations, preference pairs) from them and the bundled reward data."""

import tempfile
from collections import Counter
from pathlib import Path

import dagster as dg

from bigaction_assets.annotate.export import agreement, annotation_rows
from bigaction_assets.annotate.items import annotation_items as find_items
from bigaction_assets.defs.metadata import column_schema, markdown_preview
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.reward.resources import open_store
from bigaction_assets.lake_reader import iter_partition_batches
from bigaction_assets.lake_writer import open_partition, write_partition
from bigaction_assets.privacy.register import load_forgotten
from bigaction_assets.reward.build import build_reward_examples
from bigaction_assets.reward.examples import RewardSettings
from bigaction_assets.reward.files import write_reward_files
from bigaction_assets.reward.prompts import PROMPT_VERSION
from bigaction_assets.schemas import arrow_schema, frame
from bigaction_assets.schemas.reward import (
    AnnotationItemSchema,
    AnnotationSchema,
    RewardExampleSchema,
)
from bigaction_assets.sink import ValidatedSink

GROUP = "reward"
ITEMS_VERSION = "1"
REWARD_VERSION = f"2.p{PROMPT_VERSION}"  # 2: a source file's own split stands


class AnnotationItemsConfig(dg.Config):
    datasets: list[str] | None = None
    """Standardized datasets to draw items from (a dataset's name takes all its shards, a
    partition key one shard); all when unset."""
    per_dataset: int | None = 2_000
    """Most items taken from one dataset, across its shards, in lake order."""
    max_annotators: int = 3
    """Annotators per item (N): an item stops being handed out once N have it."""


class RewardExamplesConfig(dg.Config):
    test_per_category: int = 30
    """Judged proposals per category (MN, CR, CD, FA) drawn to the test set from those that
    come without a split (the annotation app's); a source file's own split always stands."""
    seed: int = 42
    """Seed of that draw."""
    web_test_share: float = 0.1
    """Share of web-step prompts whose pairs go to the test set."""


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet", "sqlite"},
    deps=["episodes", "events", "dom_snapshots"],
    code_version=ITEMS_VERSION,
    metadata={"dagster/column_schema": column_schema(AnnotationItemSchema)},
)
def annotation_items(
    context: dg.AssetExecutionContext,
    lake: LakeResource,
    config: AnnotationItemsConfig,
) -> dg.MaterializeResult:
    """One row per item people can label (web step, proactive turn); loaded into the app.

    Streamed: items (each with a page of up to 200,000 characters) are validated and written a
    batch at a time, and the app's store is loaded from the written partition once it is whole,
    so memory does not grow with the number of datasets or shards."""
    forgotten = load_forgotten(lake.store, lake.landing).episodes
    kinds: Counter[str] = Counter()
    by_dataset: Counter[str] = Counter()
    ids: set[str] = set()
    schema = arrow_schema(AnnotationItemSchema)
    with open_partition(lake.store, GROUP, "annotation_items", "all", schema) as writer:
        sink = ValidatedSink(AnnotationItemSchema, writer)
        for item in find_items(lake.store, config.datasets, config.per_dataset):
            if item["episode_id"] in forgotten:
                continue
            if item["item_id"] in ids:  # the contract's uniqueness, across batches
                raise ValueError(f"item {item['item_id']} made twice: its episode id repeats")
            ids.add(item["item_id"])
            kinds[item["item_kind"]] += 1
            by_dataset[item["dataset"]] += 1
            sink.add(item)
        sink.flush()
    store = open_store(lake)
    erased = store.forget_episodes(forgotten)
    new = 0
    for batch in iter_partition_batches(lake.store, GROUP, "annotation_items", "all"):
        loaded = [{**row, "kind": row["item_kind"]} for row in batch.to_pylist()]
        new += store.load_items(loaded, config.max_annotators)
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            "items_by_kind": dict(kinds),
            "items_by_dataset": dict(sorted(by_dataset.items())),
            "new_in_store": new,
            "erased_from_store": erased,
            "store": dg.MetadataValue.path(str(lake.annotation_store)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet", "sqlite"},
    # the forget job erases the lake first, then this purges the app's store of the same senders
    deps=[annotation_items, "forgotten_users"],
    metadata={"dagster/column_schema": column_schema(AnnotationSchema)},
)
def annotations(
    context: dg.AssetExecutionContext,
    lake: LakeResource,
) -> dg.MaterializeResult:
    """One row per human judgement: an annotator's latest label on an item."""
    store = open_store(lake)
    erased = store.forget_episodes(load_forgotten(lake.store, lake.landing).episodes)
    revision = store.latest_revision()
    labels = list(store.export_labels())
    rows = list(annotation_rows(labels))
    write_partition(lake.store, GROUP, "annotations", "all", frame(AnnotationSchema, rows))
    candidates = {
        label["item_id"]: len(label["payload"].get("candidate_tasks") or ()) for label in labels
    }
    kappa = agreement(rows, candidates)
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "store_revision": revision,
            "annotators": len({row["annotator_id"] for row in rows}),
            "labels_by_kind": dict(Counter(row["item_kind"] for row in rows)),
            "fleiss_kappa": dg.MetadataValue.json(kappa),
            **{f"fleiss_kappa/{kind}": summary["fleiss_kappa"] for kind, summary in kappa.items()},
            "erased_from_store": erased,
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet", "json"},
    deps=[annotations, annotation_items, "episodes", "events"],
    code_version=REWARD_VERSION,
    metadata={"dagster/column_schema": column_schema(RewardExampleSchema)},
)
def reward_examples(
    context: dg.AssetExecutionContext, lake: LakeResource, config: RewardExamplesConfig
) -> dg.MaterializeResult:
    """One row per training example: a judge conversation or a preference pair."""
    settings = RewardSettings(config.test_per_category, config.seed, config.web_test_share)
    rows, counts = build_reward_examples(lake.store, settings)
    table = frame(RewardExampleSchema, rows)
    write_partition(lake.store, GROUP, "reward_examples", "all", table)
    store = lake.store
    if isinstance(store, Path):
        out = str(Path(lake.data_dir) / GROUP / "llama_factory")
        files = write_reward_files(rows, Path(out))
    else:  # beside an object-store lake, as data/reward/ is beside data/lake/
        outputs = store.beside(GROUP).child("llama_factory")
        with tempfile.TemporaryDirectory(prefix="bigaction-reward-") as folder:
            files = write_reward_files(rows, Path(folder))
            outputs.publish_folder(Path(folder))
        out = outputs.uri
    lake.refresh_catalog(context.log)
    preview = [{c: row[c] for c in ("example_id", "kind", "category", "split")} for row in rows[:5]]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            **{key: dg.MetadataValue.json(value) for key, value in counts.items()},
            "files": dg.MetadataValue.json(files),
            "path": dg.MetadataValue.path(out),
            "preview": dg.MetadataValue.md(markdown_preview(preview)),
        }
    )
