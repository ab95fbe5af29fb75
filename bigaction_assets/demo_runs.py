"""The Dagster half of `make demo`: the runs a rerun plan asks for, and their stamps.

Imported only when something is out of date: loading Dagster and the definitions takes longer
than a whole no-change rerun may.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from bigaction_assets.instance_storage import kept_engine_instance
from bigaction_assets.rerun.graph import Graph
from bigaction_assets.rerun.plan import Plan, Step, output_files
from bigaction_assets.rerun.stamps import Stamps

# Runs are recorded in the instance for the UI; the terminal gets warnings and the summary.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def load_definitions() -> dg.Definitions:
    from bigaction_assets.definitions import defs  # after DAGSTER_HOME is set

    return defs()


def graph_from_dagster(jobs: list[str]) -> Graph:
    from bigaction_assets.defs.rerun_graph import graph_of

    return graph_of(load_definitions(), jobs)


def run_config(graph: Graph, assets: list[str], configs: dict[str, Any]) -> dict[str, Any]:
    """QUIET, plus the config of each of `assets` that was given one (`--config`)."""
    ops = {
        graph.assets[asset].op: {"config": configs[asset]}
        for asset in assets
        if configs.get(asset) and configs[asset] != graph.assets[asset].config
    }
    return {**QUIET, "ops": ops} if ops else QUIET


def run_step(
    definitions: dg.Definitions,
    instance: dg.DagsterInstance,
    graph: Graph,
    step: Step,
    configs: dict[str, Any],
) -> bool:
    """One run of each of the step's jobs with something out of date; whether all succeeded."""
    for job in (step.job, *step.then):
        stale = sorted({asset for asset, _ in step.stale if asset in graph.jobs[job]})
        if not stale:
            continue
        if not run_job(definitions, instance, job, stale, step, run_config(graph, stale, configs)):
            return False  # the step's later jobs would build on what failed
    return True


def run_job(
    definitions: dg.Definitions,
    instance: dg.DagsterInstance,
    job: str,
    assets: list[str],
    step: Step,
    config: dict[str, Any],
) -> bool:
    """One run of `job` on `assets`, on the step's partitions; whether it succeeded."""
    keys = [dg.AssetKey(asset) for asset in assets]
    options: dict[str, Any] = {}
    if len(step.partitions) == 1:
        options["partition_key"] = step.partitions[0]
    elif step.partitions:  # a range of batches, ingested in one run
        stale = [p for _, p in step.stale if p is not None]
        options["tags"] = {
            "dagster/asset_partition_range_start": min(stale),
            "dagster/asset_partition_range_end": max(stale),
        }
    result = definitions.resolve_job_def(job).execute_in_process(
        instance=instance,
        raise_on_error=False,
        run_config=config,
        asset_selection=keys,
        **options,
    )
    return result.success


def materialize(
    plan: Plan,
    graph: Graph,
    configs: dict[str, Any],
    stamps: Stamps,
    data_dir: Path,
    explain: bool = False,
) -> dict[str, bool]:
    """Registers every partition, runs each step that has something out of date, and stamps
    what a successful run built (a failed run stamps nothing: it runs again next time)."""
    definitions = load_definitions()
    instance = kept_engine_instance(Path(os.environ["DAGSTER_HOME"]))
    register_partitions(plan, graph, instance)
    outcome = {}
    for step in plan.steps:
        if not step.stale:
            print(f"  up to date {step.name}", flush=True)
            continue
        if explain:
            explain_step(step)
        ok = run_step(definitions, instance, graph, step, configs)
        outcome[step.name] = ok
        finish_step(step, ok, plan, graph, stamps, data_dir)
    return outcome


def register_partitions(plan: Plan, graph: Graph, instance: dg.DagsterInstance) -> None:
    """Adds every partition the plan's steps own and the instance does not know yet."""
    owned = {(graph.assets[a].partitions, p) for s in plan.steps for a, p in s.owns if p}
    for name in sorted({n for n, _ in owned if n}):  # datasets, benchmark_datasets, batches
        known = set(instance.get_dynamic_partitions(name))
        keys = sorted(p for n, p in owned if n == name and p not in known)
        instance.add_dynamic_partitions(name, keys)


def explain_step(step: Step) -> None:
    for (asset, partition), why in sorted(step.why.items(), key=str):
        print(f"    {asset}{f'[{partition}]' if partition else ''}: {why}")


def finish_step(
    step: Step, ok: bool, plan: Plan, graph: Graph, stamps: Stamps, data_dir: Path
) -> None:
    """Says how the step went and stamps what a successful one built."""
    print(f"  {'ok    ' if ok else 'FAILED'} {step.name}", flush=True)
    for asset, partition in step.stale if ok else ():
        built: list[Path] | dict[str, list[Any]] = (
            output_files(graph, data_dir, asset, partition)
            if stamps.store is None
            else stamps.store.outputs(graph.assets[asset].group, asset, partition)
        )
        stamps.record(asset, partition, plan.fingerprints[asset, partition], built)
    stamps.save()  # after each run: a later failure keeps what is already built
