"""Gates on the SFT examples: they fit the context, keep episodes in one split, and parse."""

from collections.abc import Iterator
from typing import Any

import dagster as dg

from bigaction_assets import quality
from bigaction_assets.defs.gates import blocking_lake_check, offenders_result
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import iter_table_rows
from bigaction_assets.schemas.sft import SFT_FORMATS
from bigaction_assets.sft.lengths import length_problem, should_recount
from bigaction_assets.sft.validate import example_problems

GROUP = "sft"


def _rows(
    context: dg.AssetCheckExecutionContext, lake: LakeResource, columns: list[str]
) -> Iterator[dict[str, Any]]:
    """Rows of the partition being checked (of every partition in a run without one), a row
    group at a time: these texts are long. Checking one partition keeps a dataset's check
    independent of the size of the others."""
    partition = context.partition_key if context.has_partition_key else None
    return iter_table_rows(lake.root, GROUP, "sft_examples", columns, partition)


@dg.asset_check(
    asset="sft_examples",
    blocking=True,
    partitions_def=datasets_partitions,
    description="No example is longer than its context length; counts are verified from the text.",
)
def examples_fit_context(
    context: dg.AssetCheckExecutionContext, lake: LakeResource
) -> dg.AssetCheckResult:
    columns = ["example_id", "tokens", "context_tokens", "content_sha", *SFT_FORMATS]
    offenders, recounted = [], 0
    for position, row in enumerate(_rows(context, lake, columns)):
        problem = None
        if row["tokens"] > row["context_tokens"]:
            problem = f"{row['tokens']} tokens, over its context of {row['context_tokens']}"
        elif should_recount(position, row["content_sha"]):
            recounted += 1
            problem = length_problem(row, SFT_FORMATS)
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
    for position, row in enumerate(
        _rows(context, lake, ["example_id", "content_sha", *SFT_FORMATS])
    ):
        if not should_recount(position, row["content_sha"]):
            continue
        validated += 1
        problems = example_problems({name: row[name] for name in SFT_FORMATS})
        if problems:
            offenders.append({"example_id": row["example_id"], "problems": problems[:3]})
    result = offenders_result(offenders, "examples a consumer would refuse")
    return result.with_metadata({**result.metadata, "validated_from_text": validated})
