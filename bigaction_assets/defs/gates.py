"""Shared shape of the quality gates: a finder of offending rows turned into a check result."""

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.episode_ids import KeyedTable, repeated_keys
from bigaction_assets.lake_sql import query_connection

Finder = Callable[..., list[dict[str, Any]]]
"""`finder(con, lake)` gives offending rows of the whole table; `finder(con, lake,
partition=key)`, of one partition (for the checks made `per_partition`)."""
SHOWN_OFFENDERS = 20
PER_PARTITION_NOTE = "Checked on the partition a run builds (the whole table otherwise)."


def lake_cache(lake: LakeResource, kind: str) -> Path:
    """This machine's cache folder of `kind` for the lake (one data folder may serve several)."""
    where = lake.lake_uri or str(Path(lake.data_dir).resolve() / "lake")
    return lake.caches / kind / hashlib.sha256(where.encode()).hexdigest()[:16]


def offenders_result(
    offenders: list[dict[str, Any]],
    what: str,
    *,
    spec: dg.AssetCheckSpec | None = None,
    metadata: dict[str, Any] | None = None,
) -> dg.AssetCheckResult:
    """Passed when there are no offenders; else how many, with the first few as metadata.

    `spec`: the check this result answers, for a step that answers several."""
    shown = {"offenders": dg.MetadataValue.json(offenders[:SHOWN_OFFENDERS])} if offenders else {}
    return dg.AssetCheckResult(
        asset_key=spec.asset_key if spec else None,
        check_name=spec.name if spec else None,
        passed=not offenders,
        description=f"{len(offenders)} {what}" if offenders else f"no {what}",
        metadata={**shown, **(metadata or {})},
    )


def blocking_lake_check(
    asset: str,
    name: str,
    what: str,
    finder: Finder,
    description: str,
    per_partition: bool = False,
    partitions_def: dg.PartitionsDefinition = datasets_partitions,
) -> dg.AssetChecksDefinition:
    """A blocking check that fails when `finder` returns any row from the lake.

    `per_partition`: the property holds within a dataset partition (its events against its own
    episodes, pages and images), so a materialized partition is checked alone, not the whole
    table again: a build of N partitions reads N files, not N^2 (a run of several partitions at
    once checks the table). `partitions_def`: the asset's (the benchmark's differ)."""

    @dg.asset_check(
        asset=asset,
        name=name,
        blocking=True,
        description=f"{description} {PER_PARTITION_NOTE}" if per_partition else description,
        partitions_def=partitions_def if per_partition else None,
    )
    def _check(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
        scope: dict[str, str] = {}
        if per_partition and context.has_partition_key:
            scope["partition"] = context.partition_key
        with query_connection(lake.store) as con:
            return offenders_result(finder(con, lake.store, **scope), what)

    return _check


def unique_keys_check(
    asset: str, name: str, table: KeyedTable, cache_kind: str, what: str, description: str
) -> dg.AssetChecksDefinition:
    """A blocking check that `table`'s key holds each value once across all its partitions.

    Each machine keeps the partitions' key hashes by file version in its cache folder
    `cache_kind` (`episode_ids.py`), so a step reads the keys of what changed, not the whole
    table."""

    @dg.asset_check(asset=asset, name=name, blocking=True, description=description)
    def _check(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
        cache = lake_cache(lake, cache_kind)
        offenders, tally = repeated_keys(lake.store, table, cache=cache, limit=None)
        return offenders_result(offenders, what, metadata=tally)

    return _check
