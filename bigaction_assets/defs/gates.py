"""Shared shape of the quality gates: a finder of offending rows turned into a check result."""

from collections.abc import Callable
from typing import Any

import dagster as dg
import duckdb

from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake import Lake, query_connection

Finder = Callable[[duckdb.DuckDBPyConnection, Lake], list[dict[str, Any]]]
SHOWN_OFFENDERS = 20


def offenders_result(offenders: list[dict[str, Any]], what: str) -> dg.AssetCheckResult:
    """Passed when there are no offenders; else how many, with the first few as metadata."""
    return dg.AssetCheckResult(
        passed=not offenders,
        description=f"{len(offenders)} {what}" if offenders else f"no {what}",
        metadata=(
            {"offenders": dg.MetadataValue.json(offenders[:SHOWN_OFFENDERS])} if offenders else {}
        ),
    )


def blocking_lake_check(
    asset: str, name: str, what: str, finder: Finder, description: str
) -> dg.AssetChecksDefinition:
    """A blocking check that fails when `finder` returns any row from the lake."""

    @dg.asset_check(asset=asset, name=name, blocking=True, description=description)
    def _check(lake: LakeResource) -> dg.AssetCheckResult:
        with query_connection(lake.store) as con:
            return offenders_result(finder(con, lake.store), what)

    return _check
