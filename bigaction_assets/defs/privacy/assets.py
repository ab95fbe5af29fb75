"""The register of forgotten senders; materializing it erases them everywhere."""

from pathlib import Path

import dagster as dg

from bigaction_assets.defs.metadata import column_schema
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import write_partition
from bigaction_assets.llm.forget import erase_subjects
from bigaction_assets.privacy import forget, register
from bigaction_assets.privacy.erasure import Forgotten, erase_lake, erase_landing
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.telemetry import ForgottenUserSchema
from bigaction_assets.sft.files import GROUP as SFT_GROUP
from bigaction_assets.sft.files import write_sft_files

ERASURE_VERSION = "1"


@dg.asset(
    group_name="privacy",
    kinds={"python", "parquet"},
    code_version=ERASURE_VERSION,
    metadata={"dagster/column_schema": column_schema(ForgottenUserSchema)},
)
def forgotten_users(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per sender who asked to be forgotten; their rows are erased from the landing
    area and from every lake table that ties rows to a sender or an episode."""
    requested, kept = forget.requests(lake.landing), register.tombstones(lake.root)
    pseudonyms = frozenset(requested) | frozenset(kept)
    # which episodes were theirs: read before anything is erased
    erased_episodes = register.raw_episodes(lake.root, pseudonyms)
    landing = erase_landing(lake.landing, pseudonyms)
    for owner, episodes in landing.episodes.items():
        erased_episodes.setdefault(owner, set()).update(episodes)
    rows = register.tombstone_rows(lake.landing, lake.root, erased_episodes)
    everything = Forgotten(pseudonyms, frozenset(e for r in rows for e in r["episode_ids"]))
    erased = erase_lake(lake.root, everything)
    # prompts and replies in the LLM call cache were built from their episodes
    calls_erased = erase_subjects(lake.llm_cache, everything.episodes)
    for table, partitions in erased.items():
        asset = table.split("/", 1)[1]
        for key, count in partitions.items():
            context.log_event(
                dg.AssetMaterialization(
                    asset_key=asset,
                    partition=None if key == "all" else key,
                    description="rewritten without the rows of forgotten senders",
                    metadata={"erased_rows": count},
                )
            )
    sft_out = Path(lake.data_dir) / SFT_GROUP
    if f"{SFT_GROUP}/sft_examples" in erased and sft_out.is_dir():
        # the SFT files are rendered from sft_examples: written again without their examples
        summary = write_sft_files(lake.root, sft_out)
        context.log_event(
            dg.AssetMaterialization(
                asset_key="sft_files",
                description="rewritten without the examples of forgotten senders",
                metadata={"examples_by_split": summary["examples_by_split"]},
            )
        )
    table = frame(ForgottenUserSchema, rows)
    write_partition(lake.root, "privacy", "forgotten_users", "all", table)
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "landing_records_erased": landing.records,
            "landing_files_rewritten": landing.files_rewritten,
            "landing_files_removed": landing.files_removed,
            "lake_rows_erased": {t: sum(p.values()) for t, p in sorted(erased.items())},
            "episodes_forgotten": len(everything.episodes),
            "llm_calls_erased": calls_erased,
        }
    )
