"""The register of forgotten senders; materializing it erases them everywhere."""

from pathlib import Path
from typing import Any

import dagster as dg

from bigaction_assets.defs.metadata import column_schema
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_writer import write_partition
from bigaction_assets.llm.forget import erase_subjects
from bigaction_assets.privacy import forget, register
from bigaction_assets.privacy.erasure import Forgotten, erase_lake
from bigaction_assets.privacy.landing_erasure import erase_landing
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.telemetry import ForgottenUserSchema
from bigaction_assets.sft.files import GROUP as SFT_GROUP
from bigaction_assets.sft.files import publish_sft_files, write_sft_files

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
    store = lake.store
    requested, kept = forget.requests(lake.landing), register.tombstones(store)
    pseudonyms = frozenset(requested) | frozenset(kept)
    # which episodes were theirs: read before anything is erased
    erased_episodes = register.raw_episodes(store, pseudonyms)
    landing = erase_landing(lake.landing, pseudonyms)
    for owner, episodes in landing.episodes.items():
        erased_episodes.setdefault(owner, set()).update(episodes)
    rows = register.tombstone_rows(lake.landing, store, erased_episodes)
    # the register first: if the erasure below stops midway (the raw tables that said which
    # episodes were theirs already erased), a rerun still knows every episode to erase
    table = frame(ForgottenUserSchema, rows)
    write_partition(store, "privacy", "forgotten_users", "all", table)
    everything = Forgotten(pseudonyms, frozenset(e for r in rows for e in r["episode_ids"]))
    erased = erase_lake(store, everything)
    # prompts and replies in the LLM call cache were built from their episodes
    calls_erased = erase_subjects(lake.llm_cache, everything.episodes)
    for table_name, partitions in erased.items():
        asset = table_name.split("/", 1)[1]
        for key, count in partitions.items():
            context.log_event(
                dg.AssetMaterialization(
                    asset_key=asset,
                    partition=None if key == "all" else key,
                    description="rewritten without the rows of forgotten senders",
                    metadata={"erased_rows": count},
                )
            )
    # the SFT files are rendered from sft_examples: written again without their examples, also
    # when a run stopped after erasing the examples (an unchanged file is left as it is)
    summary = rewrite_sft_files(lake) if everything else None
    if f"{SFT_GROUP}/sft_examples" in erased and summary:
        context.log_event(
            dg.AssetMaterialization(
                asset_key="sft_files",
                description="rewritten without the examples of forgotten senders",
                metadata={"examples_by_split": summary["examples_by_split"]},
            )
        )
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


def rewrite_sft_files(lake: LakeResource) -> dict[str, Any] | None:
    """The SFT files written again from the erased examples, where they were written before
    (the data folder, or beside an object-store lake); None where there are none."""
    store = lake.store
    if isinstance(store, Path):
        out = Path(lake.data_dir) / SFT_GROUP
        return write_sft_files(store, out) if out.is_dir() else None
    published = store.beside(SFT_GROUP)
    return publish_sft_files(store) if published.list_files() else None
