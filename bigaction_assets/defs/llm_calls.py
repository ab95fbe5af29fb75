"""What every asset that calls a model shares: the no-model path and the calls' metadata."""

from typing import Any

import dagster as dg
import pandera.polars as pa

from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import partition_exists, partition_file
from bigaction_assets.lake_rows import footer_rows
from bigaction_assets.lake_writer import write_partition
from bigaction_assets.llm.caller import RunStats
from bigaction_assets.schemas import frame

NO_MODEL = "no model configured"
HOW_TO_CONFIGURE = (
    "set BIGACTION_LLM_MODEL (and BIGACTION_LLM_BASE_URL, OPENAI_API_KEY); "
    "`make llm` serves a local model"
)


def keep_without_model(
    context: dg.AssetExecutionContext,
    lake: LakeResource,
    group: str,
    asset: str,
    model: type[pa.DataFrameModel],
) -> int:
    """With no model there is nothing new to say: keep the partition made earlier, or write an
    empty one so readers find the table. Rows it holds."""
    key = context.partition_key
    if not partition_exists(lake.store, group, asset, key):
        write_partition(lake.store, group, asset, key, frame(model, []))
        lake.refresh_catalog(context.log)
    return footer_rows(lake.store, partition_file(lake.store, group, asset, key))


def calls_metadata(llm: LLMResource, stats: RunStats) -> dict[str, Any]:
    """Calls made and answered from the cache, failures, retries, budget, tokens and cost."""
    return {
        "model": str(llm.model),
        "calls_made": stats.requests,
        "cache_hits": stats.cache_hits,
        "failures_by_reason": dict(sorted(stats.failures.items())),
        "failed_in_earlier_runs": dict(sorted(stats.failed_before.items())),
        "invalid_replies_by_reason": dict(sorted(stats.invalid_outputs.items())),
        "retries_by_reason": dict(sorted(stats.retries.items())),
        "cached_outputs_refused_now": dict(sorted(stats.stale_outputs.items())),
        "deferred_by_budget": stats.deferred,
        "tokens_in": stats.spend.prompt_tokens,
        "tokens_out": stats.spend.completion_tokens,
        "cost_usd": round(stats.spend.cost_usd, 6),
        "price_known": str(llm.model) in llm.prices,
    }
