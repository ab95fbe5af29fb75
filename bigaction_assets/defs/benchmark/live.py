"""A live model on the benchmark: its replies to both turns of every valid step, per dataset."""

from collections import Counter

import dagster as dg

from bigaction_assets.benchmark.live import ask_live_model, kept_answers
from bigaction_assets.benchmark.prompts import PROMPT_VERSION
from bigaction_assets.defs.automation import WITH_ITS_DATASET
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
from bigaction_assets.defs.partitions import benchmark_datasets
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.benchmark import MODES, ModelAnswerSchema
from bigaction_assets.sink import ValidatedSink

GROUP = "benchmark"
ANSWERS_VERSION = f"2.{PROMPT_VERSION}"  # 2: a mode per row; turn one carries the screenshot
PREVIEW = ("task_id", "step", "status", "answer_two")


class ModelAnswersConfig(dg.Config):
    mode: str = "screenshot"
    """`screenshot`: turn one shows the step's screenshot (a vision-language model; steps
    without one are not asked); `text`: the page's HTML alone, for a text-only model."""


def model_answers_asset(llm: LLMResource) -> dg.AssetsDefinition:
    """`model_answers` asking `llm`; the code location binds `environment_llm()`."""

    @dg.asset(
        group_name=GROUP,
        kinds={"python", "parquet", "openai"},
        partitions_def=benchmark_datasets,
        deps=["benchmark_snapshot"],
        code_version=ANSWERS_VERSION,
        automation_condition=WITH_ITS_DATASET,
        pool="llm",
        resource_defs={"llm": llm},
        metadata={"dagster/column_schema": column_schema(ModelAnswerSchema)},
    )
    def model_answers(
        context: dg.AssetExecutionContext,
        lake: LakeResource,
        llm: LLMResource,
        config: ModelAnswersConfig,
    ) -> dg.MaterializeResult:
        """One row per (model, mode, step): a live model's replies to both turns of a step."""
        if config.mode not in MODES:
            raise dg.Failure(f"model_answers: mode {config.mode!r} is not one of {list(MODES)}")
        key = context.partition_key
        if not llm.configured:
            kept = keep_without_model(context, lake, GROUP, "model_answers", ModelAnswerSchema)
            metadata = {"llm": NO_MODEL, "how_to_configure": HOW_TO_CONFIGURE}
            totals = totals_across_partitions(lake, GROUP, "model_answers")
            return dg.MaterializeResult(metadata={**metadata, "dagster/row_count": kept, **totals})
        settings = llm.config()
        others = kept_answers(lake.store, key, settings.client.model, config.mode)
        run = ask_live_model(
            lake.store, key, settings, lake.llm_cache, context.run.run_id, config.mode
        )
        statuses = Counter(row["status"] for row in run.rows)
        schema = arrow_schema(ModelAnswerSchema)
        with open_partition(lake.store, GROUP, "model_answers", key, schema) as out:
            sink = ValidatedSink(ModelAnswerSchema, out)
            for row in [*others, *run.rows]:
                sink.add(row)
            sink.flush()
        lake.refresh_catalog(context.log)
        preview = [{c: row[c] for c in PREVIEW} for row in run.rows[:5]]
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": sink.total,
                **totals_across_partitions(lake, GROUP, "model_answers"),
                **calls_metadata(llm, run.stats),
                "mode": config.mode,
                "steps_answered_by_status": dict(sorted(statuses.items())),
                "invalid_steps_not_asked": run.invalid_steps,
                "other_models_kept": sorted({f"{r['model']} ({r['mode']})" for r in others}),
                "preview": dg.MetadataValue.md(markdown_preview(preview)),
            }
        )

    return model_answers


model_answers = model_answers_asset(environment_llm())
