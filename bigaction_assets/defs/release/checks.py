"""Gates around the release: upstream blocking checks must have passed, and the files are whole."""

import json
from pathlib import Path

import dagster as dg
from dagster._core.definitions.assets.graph.asset_graph import AssetGraph
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.storage.asset_check_execution_record import (
    COMPLETED_ASSET_CHECK_EXECUTION_RECORD_STATUSES,
)

from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.release.build import MANIFEST, file_digests
from bigaction_assets.release.published import object_digests, read_manifest, release_root

RELEASE_DIR = "release"


def code_location_graph() -> AssetGraph:
    """The code location's asset graph.

    Read from the code location, not from the run: a step run by `materialize` or
    `execute_in_process` sees only the run's selection (and no repository), so a release run on
    its own would otherwise see no upstream checks at all.
    """
    from bigaction_assets.definitions import defs  # the code location imports this module

    return defs().resolve_asset_graph()


def blocking_checks_on(graph: AssetGraph, parents: set[dg.AssetKey]) -> list[dg.AssetCheckKey]:
    """The blocking checks of `graph` on `parents`."""
    return sorted(
        (
            k
            for k in graph.asset_check_keys
            if k.asset_key in parents and graph.get_check_spec(k).blocking
        ),
        key=lambda k: k.to_user_string(),
    )


def failed_upstream_gates(context: dg.AssetExecutionContext, datasets: list[str]) -> list[str]:
    """Why the release may not run: each blocking check on a parent asset whose latest
    evaluation (in any run) failed, or that was never evaluated.

    A partitioned check is looked up for every released dataset on its own: the latest
    evaluation of one partition says nothing of another's.
    """
    graph = code_location_graph()
    parents = set(context.job_def.asset_layer.asset_graph.get(context.asset_key).parent_keys)
    storage = context.instance.event_log_storage
    problems = []
    for check_key in blocking_checks_on(graph, parents):
        partitioned = graph.get_check_spec(check_key).partitions_def is not None
        for partition in datasets if partitioned else [None]:
            where = f" [{partition}]" if partition else ""
            history = storage.get_asset_check_execution_history(
                check_key,
                limit=1,
                status=COMPLETED_ASSET_CHECK_EXECUTION_RECORD_STATUSES,
                partition_filter=PartitionKeyFilter(key=partition) if partition else None,
            )
            evaluation = history[0].event.asset_check_evaluation if history else None
            if evaluation is None:
                problems.append(f"{check_key.to_user_string()}{where} was never evaluated")
            elif not evaluation.passed:
                problems.append(
                    f"{check_key.to_user_string()}{where} failed in run {history[0].run_id[:8]}"
                    + (f": {evaluation.description}" if evaluation.description else "")
                )
    return problems


@dg.asset_check(
    asset="hub_release",
    description="Every file of the local release matches the sha256 its manifest records.",
)
def release_matches_manifest(lake: LakeResource) -> dg.AssetCheckResult:
    store = lake.store
    if isinstance(store, Path):
        folder = Path(lake.data_dir) / RELEASE_DIR
        recorded = json.loads((folder / MANIFEST).read_text())["files"]
        actual = file_digests(folder)
    else:  # the release published beside an object-store lake
        root = release_root(store)
        manifest = read_manifest(root)
        if manifest is None:
            return dg.AssetCheckResult(passed=False, description=f"no {MANIFEST} in {root.uri}")
        recorded, actual = manifest["files"], object_digests(root)
    differ = sorted(p for p in set(recorded) | set(actual) if recorded.get(p) != actual.get(p))
    return dg.AssetCheckResult(
        passed=not differ,
        description=f"{len(differ)} file(s) differ" if differ else f"{len(actual)} files match",
        metadata={"differ": dg.MetadataValue.json(differ[:20])} if differ else {},
    )
