"""Thoughts stage: the reasoning before each agent action that a dataset did not record."""

from collections import Counter
from typing import Any

import dagster as dg

from bigaction_assets.defs.llm_calls import (
    HOW_TO_CONFIGURE,
    NO_MODEL,
    calls_metadata,
    keep_without_model,
)
from bigaction_assets.defs.llm_resource import LLMResource, environment_llm
from bigaction_assets.defs.metadata import (
    column_schema,
    markdown_preview,
    totals_across_partitions,
)
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.llm.caller import RunStats
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.thoughts import ThoughtSchema
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.thoughts.context import ContextSettings
from bigaction_assets.thoughts.generate import ask_for_thoughts, thought_rows
from bigaction_assets.thoughts.prompts import PROMPT_VERSION, template_sha
from bigaction_assets.thoughts.requests import count_actions_without_thought

GROUP = "thoughts"
# Bump when what is asked or how replies are read changes; the templates' hash is added.
THOUGHTS_VERSION = f"1.{PROMPT_VERSION}.{template_sha()[:12]}"


class ThoughtsConfig(dg.Config):
    observation_tokens: int = 768
    """Most cl100k_base tokens of one observation in a prompt; longer ones are cut."""
    history_tokens: int = 3072
    """Most tokens of the episode so far shown before the action (latest events first)."""
    action_tokens: int = 512
    """Most tokens of the action itself."""
    representation: str = "axtree"
    """Pages as `axtree` where there is one, else HTML; or always `html`."""


def thoughts_asset(llm: LLMResource) -> dg.AssetsDefinition:
    """`thoughts` calling through `llm`; the code location binds `environment_llm()`.

    Like the Hub on `hub_release`, the model is bound on the asset, not among the top-level
    resources, so running the rest of the graph never needs one; tests bind a local server.
    """

    @dg.asset(
        group_name=GROUP,
        kinds={"python", "parquet", "openai"},
        partitions_def=datasets_partitions,
        deps=["episodes", "events", "dom_snapshots"],
        code_version=THOUGHTS_VERSION,
        pool="llm",
        resource_defs={"llm": llm},
        metadata={"dagster/column_schema": column_schema(ThoughtSchema)},
    )
    def thoughts(
        context: dg.AssetExecutionContext,
        lake: LakeResource,
        llm: LLMResource,
        config: ThoughtsConfig,
    ) -> dg.MaterializeResult:
        """One row per (episode, action, model, prompt): a thought for an action that had none."""
        key = context.partition_key
        if not llm.configured:
            return _without_model(context, lake, key)
        settings = ContextSettings(
            config.observation_tokens, config.history_tokens, config.action_tokens,
            config.representation,
        )  # fmt: skip
        run = ask_for_thoughts(
            lake.store, key, llm.config(), lake.llm_cache, context.run.run_id, settings
        )
        statuses: Counter[str] = Counter()
        schema = arrow_schema(ThoughtSchema)
        with open_partition(lake.store, GROUP, "thoughts", key, schema) as out:
            sink = ValidatedSink(ThoughtSchema, out)
            for row in thought_rows(run.records, lake.llm_cache, key):
                sink.add(row)
                statuses[row["status"]] += 1
            sink.flush()
        lake.refresh_catalog(context.log)
        stats = run.stats
        context.log.info(
            f"{key}: {stats.requests} calls, {stats.cache_hits} from cache, {dict(statuses)}"
        )
        metadata = _metadata(llm, stats, statuses, run.examples, sink.total)
        totals = totals_across_partitions(lake, GROUP, "thoughts")
        return dg.MaterializeResult(metadata={**metadata, **totals})

    return thoughts


def _metadata(
    llm: LLMResource, stats: RunStats, statuses: Counter[str], examples: list[dict[str, str]],
    rows: int,
) -> dict[str, Any]:  # fmt: skip
    return {
        "dagster/row_count": rows,
        "prompt_version": PROMPT_VERSION,
        **calls_metadata(llm, stats),
        "generated_now": stats.completed,
        "rows_by_status": dict(sorted(statuses.items())),
        "examples": dg.MetadataValue.md(markdown_preview(examples) if examples else "_none_"),
    }


def _without_model(
    context: dg.AssetExecutionContext, lake: LakeResource, key: str
) -> dg.MaterializeResult:
    """No model: keep thoughts made earlier (no new information), else an empty table."""
    kept = keep_without_model(context, lake, GROUP, "thoughts", ThoughtSchema)
    waiting = count_actions_without_thought(lake.store, key)
    context.log.info(f"{key}: {NO_MODEL}; {waiting} actions have no thought")
    return dg.MaterializeResult(
        metadata={
            "llm": NO_MODEL,
            "dagster/row_count": kept,
            **totals_across_partitions(lake, GROUP, "thoughts"),
            "actions_without_thought": waiting,
            "how_to_configure": HOW_TO_CONFIGURE,
        }
    )


thoughts = thoughts_asset(environment_llm())
