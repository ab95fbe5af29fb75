"""SFT stage: training examples per dataset, then the training files across datasets."""

from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.defs.automation import AFTER_INPUTS_CHANGE
from bigaction_assets.defs.metadata import (
    column_schema,
    markdown_preview,
    totals_across_partitions,
)
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.episodes.reader import episode_count, iter_chunks
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.schemas import arrow_schema, validated_table
from bigaction_assets.schemas.sft import SFT_FORMATS, SftExampleSchema
from bigaction_assets.sft.dedup import SeenContent
from bigaction_assets.sft.examples import NOT_FOR_TRAINING, ExampleSettings
from bigaction_assets.sft.files import publish_sft_files, write_sft_files
from bigaction_assets.sft.images import IMAGE_TOKENS
from bigaction_assets.sft.parallel import render_chunks, worker_count
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.tokens import fast_encoding

# Bump when rendering changes what a model is trained on (prompts, formats, windows).
# 2: windows end on the assistant, one message per side run, thoughts in sharegpt
# 3: screenshots in every format (images, image_tokens); 4: a GIF reaches openai as a PNG
SFT_VERSION = "4"
# Bump when the files' lines change: 2 follows each dataset's written order, not example ids.
FILES_VERSION = "2"
GROUP = "sft"
PREVIEW_COLUMNS = ("example_id", "split", "tokens", "thought_source")
SHOWN_SKIPS = 20


class SftExamplesConfig(dg.Config):
    max_tokens: int = 8192
    """Context length every example must fit (cl100k_base tokens)."""
    observation_tokens: int = 2048
    """Budget of one rendered observation; longer pages are cut with a visible marker."""
    representation: str = "axtree"
    """How pages are shown: `axtree` where the source has one, else the page HTML; or `html`."""
    split_ratios: dict[str, float] = {"train": 0.9, "validation": 0.05, "test": 0.05}  # noqa: RUF012 - pydantic copies defaults
    """Share of episodes per split, by name; must add up to 1."""
    split_salt: str = ""
    """Change to draw a different (equally stable) split."""
    formats: list[str] = list(SFT_FORMATS)  # noqa: RUF012 - pydantic copies defaults
    """SFT formats to render (openai, sharegpt, openhands): a user who wants one pays for one;
    the others' columns stay null and get no files."""
    images: bool = True
    """Show each observation's screenshot where the lake has it; false makes text-only sets."""
    image_tokens: int = IMAGE_TOKENS
    """What one screenshot costs in the token budget and windows (openai and sharegpt carry
    images; the OpenHands text names each in a line): GPT-4o's high-detail price of a
    1280x720 screenshot; set your model's (Qwen2-VL: ~1,150; LLaVA-1.5: 576)."""
    workers: int = 0
    """Processes rendering episodes; 0 is one per core for partitions of 4,000 episodes or
    more, and this process alone below that. The output is the same bytes either way."""


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    partitions_def=datasets_partitions,
    deps=["episodes", "events", "dom_snapshots", "thoughts"],
    code_version=SFT_VERSION,
    metadata={"dagster/column_schema": column_schema(SftExampleSchema)},
)
def sft_examples(
    context: dg.AssetExecutionContext, lake: LakeResource, config: SftExamplesConfig
) -> dg.MaterializeResult:
    """One row per training example: a window of an episode in every SFT format."""
    settings = ExampleSettings(
        max_tokens=config.max_tokens,
        observation_tokens=config.observation_tokens,
        representation=config.representation,
        split_ratios=config.split_ratios,
        split_salt=config.split_salt,
        formats=tuple(config.formats),
        images=config.images,
        image_tokens=config.image_tokens,
    )
    key = context.partition_key
    splits: Counter[str] = Counter()
    thoughts: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    skipped_examples: list[dict[str, str]] = []
    duplicates, tokens, preview = 0, 0, []
    schema = arrow_schema(SftExampleSchema)
    with (
        open_partition(lake.store, GROUP, "sft_examples", key, schema) as writer,
        SeenContent() as seen,  # content digests: a set, then a scratch file on disk
    ):
        # a contract check costs ~25 ms however few rows: check fewer, larger batches
        sink = ValidatedSink(SftExampleSchema, writer, max_rows=20_000, max_chars=64 << 20)
        chunks = iter_chunks(lake.store, key, with_generated_thoughts=True)
        workers = worker_count(config.workers, episode_count(lake.store, key))
        # the blocking checks count tokens here: the counter loads while the workers start,
        # not after them on the run's serial tail
        for done in render_chunks(chunks, settings, schema, workers, fast_encoding):
            for episode_id, skip in done.skipped:
                skipped[skip.reason] += 1
                if len(skipped_examples) < SHOWN_SKIPS:
                    skipped_examples.append({"episode_id": episode_id, "why": skip.detail})
                log = context.log.info if skip.reason == NOT_FOR_TRAINING else context.log.warning
                log(f"{episode_id} skipped: {skip.detail}")
            # rows Arrow would not take: the contract, in the lenient way, says what is wrong
            table = (
                done.table
                if done.table is not None
                else validated_table(SftExampleSchema, done.rows)
            )
            fresh = [seen.add(bytes.fromhex(sha[:32])) for sha in table["content_sha"].to_pylist()]
            if not all(fresh):
                duplicates += fresh.count(False)
                table = table.filter(pa.array(fresh))
            sink.add_table(table)
            splits.update(table["split"].to_pylist())
            thoughts.update(table["thought_source"].to_pylist())
            tokens += pc.sum(table["tokens"]).as_py() or 0
            if len(preview) < 5:
                preview += table.select(PREVIEW_COLUMNS).slice(0, 5 - len(preview)).to_pylist()
        sink.flush()
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            **totals_across_partitions(lake, GROUP, "sft_examples"),
            "examples_by_split": dict(sorted(splits.items())),
            "thought_sources": dict(sorted(thoughts.items())),
            "duplicates_dropped": duplicates,
            "episodes_skipped_by_reason": dict(skipped),
            "episodes_skipped": dg.MetadataValue.json(skipped_examples),
            "tokens_total": tokens,
            "formats": list(settings.formats),
            "workers": workers,
            "preview": dg.MetadataValue.md(markdown_preview(preview)),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "json"},
    deps=[sft_examples],
    code_version=FILES_VERSION,
    automation_condition=AFTER_INPUTS_CHANGE,
)
def sft_files(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One JSONL file per SFT format and split, across datasets, with dataset_info.json."""
    store = lake.store
    if isinstance(store, Path):
        out: str = str(Path(lake.data_dir) / GROUP)
        summary: dict[str, Any] = write_sft_files(store, Path(out))
    else:  # an object-store lake: the files go beside it, for every worker and reader
        out, summary = store.beside(GROUP).uri, publish_sft_files(store)
    context.log.info(f"SFT files in {out}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sum(summary["examples_by_split"].values()),
            "examples_by_split": summary["examples_by_split"],
            "duplicates_dropped": summary["duplicates_dropped"],
            "files": summary["files"],
            "path": dg.MetadataValue.path(str(out)),
        }
    )
