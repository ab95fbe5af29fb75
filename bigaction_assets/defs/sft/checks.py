"""Gates on the SFT examples: they fit the context, keep episodes in one split, and parse."""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from bigaction_assets import quality
from bigaction_assets.defs.gates import blocking_lake_check, offenders_result
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import iter_rows_and_sample
from bigaction_assets.schemas.sft import SFT_FORMATS
from bigaction_assets.sft.lengths import length_problem, should_recount
from bigaction_assets.sft.validate import example_problems

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
    )


@dg.asset_check(
    asset="sft_examples",
    blocking=True,
    partitions_def=datasets_partitions,
    description="No example is longer than its context length; counts are verified from the text.",
)
def examples_fit_context(
    context: dg.AssetCheckExecutionContext, lake: LakeResource
) -> dg.AssetCheckResult:
    light = ["example_id", "tokens", "context_tokens", "content_sha", "image_tokens"]
    offenders, recounted = [], 0
    for row, texts in _rows_and_sample(context, lake, light):
        problem = None
        if row["tokens"] > row["context_tokens"]:
            problem = f"{row['tokens']} tokens, over its context of {row['context_tokens']}"
        elif texts is not None:
            recounted += 1
            problem = length_problem({**row, **texts}, SFT_FORMATS)
        if problem:
            offenders.append({"example_id": row["example_id"], "problem": problem})
    result = offenders_result(offenders, "examples over their context or miscounted")
    return result.with_metadata({**result.metadata, "recounted_from_text": recounted})


episodes_in_one_split = blocking_lake_check(
    "sft_examples",
    "episodes_in_one_split",
    "episodes in more than one split",
    quality.episodes_in_several_splits,
    "Every episode's windows are in one split, so no episode leaks across splits.",
    per_partition=True,
)


@dg.asset_check(
    asset="sft_examples",
    blocking=True,
    partitions_def=datasets_partitions,
    description=(
        "Renderings are what their consumers accept (roles, tool-call ids, JSON), verified from "
        "the stored text (the stage checks every example before writing it)."
    ),
)
def examples_valid_for_consumers(
    context: dg.AssetCheckExecutionContext, lake: LakeResource
) -> dg.AssetCheckResult:
    offenders, validated = [], 0
    for row, texts in _rows_and_sample(context, lake, ["example_id", "content_sha"]):
        if texts is None:
            continue
        validated += 1
        problems = example_problems(texts)
        if problems:
            offenders.append({"example_id": row["example_id"], "problems": problems[:3]})
    result = offenders_result(offenders, "examples a consumer would refuse")
    return result.with_metadata({**result.metadata, "validated_from_text": validated})
