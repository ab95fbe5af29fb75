"""Shared shape of the quality gates: a finder of offending rows turned into a check result."""

from collections.abc import Callable
from typing import Any

import dagster as dg

from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import query_connection

Finder = Callable[..., list[dict[str, Any]]]
"""`finder(con, lake)` gives offending rows of the whole table; `finder(con, lake,
partition=key)`, of one partition (for the checks made `per_partition`)."""
SHOWN_OFFENDERS = 20
PER_PARTITION_NOTE = "Checked on the dataset partition a run builds (the whole table otherwise)."


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
    asset: str, name: str, what: str, finder: Finder, description: str, per_partition: bool = False
) -> dg.AssetChecksDefinition:
    """A blocking check that fails when `finder` returns any row from the lake.

    `per_partition`: the property holds within a dataset partition (its events against its own
    episodes, pages and images), so a materialized partition is checked alone, not the whole
    table again: a build of N partitions reads N files, not N^2 (a run of several partitions at
    once checks the table)."""

    @dg.asset_check(
        asset=asset,
        name=name,
        blocking=True,
        description=f"{description} {PER_PARTITION_NOTE}" if per_partition else description,
        partitions_def=datasets_partitions if per_partition else None,
    )
    def _check(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
        scope: dict[str, str] = {}
        if per_partition and context.has_partition_key:
            scope["partition"] = context.partition_key
        with query_connection(lake.store) as con:
            return offenders_result(finder(con, lake.store, **scope), what)

    return _check
