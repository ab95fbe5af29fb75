"""Gates on the SFT examples: they fit the context, keep episodes in one split, and parse."""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from bigaction_assets import quality
from bigaction_assets.defs.gates import blocking_lake_check, offenders_result
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_reader import iter_rows_and_sample
from bigaction_assets.schemas.sft import SFT_FORMATS
from bigaction_assets.sft.lengths import length_problem, should_recount
from bigaction_assets.sft.validate import parsed_renderings, rendering_problems

GROUP = "sft"


def _rows_and_sample(
    context: dg.AssetCheckExecutionContext, lake: LakeResource, light: list[str]
) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Every example's `light` columns, with its renderings for the sample to verify from the
    stored text (the first of a partition, then 1 in 16 by content hash). Rows of the partition
    being checked (of every partition in a run without one), a row group at a time."""
    partition = context.partition_key if context.has_partition_key else None
    return iter_rows_and_sample(
        lake.store,
        GROUP,
        "sft_examples",
        light,
        list(SFT_FORMATS),
        lambda position, row: should_recount(position, row["content_sha"]),
        partition,
        heavy_as_utf8=True,
    )


episodes_in_one_split = blocking_lake_check(
    "sft_examples",
    "episodes_in_one_split",
    "episodes in more than one split",
    quality.episodes_in_several_splits,
    "Every episode's windows are in one split, so no episode leaks across splits.",
    per_partition=True,
)


FITS_CONTEXT = dg.AssetCheckSpec(
    "examples_fit_context",
    asset="sft_examples",
    blocking=True,
    partitions_def=datasets_partitions,
    description="No example is longer than its context length; counts are verified from the text.",
)
VALID_FOR_CONSUMERS = dg.AssetCheckSpec(
    "examples_valid_for_consumers",
    asset="sft_examples",
    blocking=True,
    partitions_def=datasets_partitions,
    description=(
        "Renderings are what their consumers accept (roles, tool-call ids, JSON), verified from "
        "the stored text (the stage checks every window's turns before rendering it)."
    ),
)


@dg.multi_asset_check(
    name="sft_examples_read_back",
    specs=[FITS_CONTEXT, VALID_FOR_CONSUMERS],
    description=(
        "The stored examples read back once for both checks: every row's counts, and the "
        "sample's renderings (decompressed with their row groups) counted and validated."
    ),
)
def examples_read_back(
    context: dg.AssetCheckExecutionContext, lake: LakeResource
) -> Iterator[dg.AssetCheckResult]:
    light = ["example_id", "tokens", "context_tokens", "content_sha", "image_tokens"]
    too_long, refused, recounted, validated = [], [], 0, 0
    for row, texts in _rows_and_sample(context, lake, light):
        # each stored rendering parsed once, for the recount and the consumers' rules alike
        parsed = None if texts is None else parsed_renderings(texts)
        problem = None
        if row["tokens"] > row["context_tokens"]:
            problem = f"{row['tokens']} tokens, over its context of {row['context_tokens']}"
        elif parsed is not None:
            recounted += 1
            problem = length_problem(row, parsed)
        if problem:
            too_long.append({"example_id": row["example_id"], "problem": problem})
        if parsed is None:
            continue
        validated += 1
        problems = rendering_problems(parsed)
        if problems:
            refused.append({"example_id": row["example_id"], "problems": problems[:3]})
    yield offenders_result(
        too_long,
        "examples over their context or miscounted",
        spec=FITS_CONTEXT,
        metadata={"recounted_from_text": recounted},
    )
    yield offenders_result(
        refused,
        "examples a consumer would refuse",
        spec=VALID_FOR_CONSUMERS,
        metadata={"validated_from_text": validated},
    )
