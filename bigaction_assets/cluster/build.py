"""`make cluster`'s build: the demo's runs, submitted to the cluster instead of run in-process.

The plan is `make demo`'s (what is out of date, by fingerprint); each run goes to the webserver,
waits in the daemon's run queue, and its steps run on the Celery workers. Where `make demo` runs
one step after another, the cluster runs each as soon as what it reads is built: every dataset
at once, the cross-dataset outputs after them, the release after the reward sets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
from dagster._core.storage.dagster_run import FINISHED_STATUSES
from dagster_graphql import DagsterGraphQLClient

from bigaction_assets.cluster.graphql import REPOSITORY
from bigaction_assets.cluster.layout import LOCATION_NAME, ClusterState
from bigaction_assets.demo import ERASURE_JOB, land_telemetry, load_graph, rerun_plan
from bigaction_assets.demo_runs import explain_step, finish_step, register_partitions, run_config
from bigaction_assets.rerun.graph import Graph
from bigaction_assets.rerun.inputs import EXTRA_DEPS
from bigaction_assets.rerun.plan import Instance, Plan, Step
from bigaction_assets.settings import Paths

POLL_SECONDS = 0.5
Submit = Callable[[str, list[str], dict[str, str], dict[str, Any]], str]


def partition_tags(step: Step) -> dict[str, str]:
    """The tags that put a run on the step's partitions (a range: the stale batches)."""
    if len(step.partitions) == 1:
        return {"dagster/partition": step.partitions[0]}
    if step.partitions:
        stale = [p for _, p in step.stale if p is not None]
        return {
            "dagster/asset_partition_range_start": min(stale),
            "dagster/asset_partition_range_end": max(stale),
        }
    return {}


def graphql_submitter(state: ClusterState) -> Submit:
    """Submits a run of a job on some assets through the cluster's webserver; its run id."""
    client = DagsterGraphQLClient("127.0.0.1", port_number=state.ports.webserver)

    def submit(job: str, assets: list[str], tags: dict[str, str], config: dict[str, Any]) -> str:
        return client.submit_job_execution(
            job,
            repository_location_name=LOCATION_NAME,
            repository_name=REPOSITORY,
            run_config=config,
            tags=tags,
            asset_selection=[dg.AssetKey(asset) for asset in assets],
        )

    return submit


def upstream(
    graph: Graph, instances: dict[str, list[str | None]], asset: str, partition: str | None
) -> set[Instance]:
    """Every output that `(asset, partition)` is built from, however far up (the rerun plan's
    rules: an unpartitioned output reads every partition of a partitioned one)."""
    seen: set[Instance] = set()
    stack = [(asset, partition)]
    while stack:
        current, key = stack.pop()
        node = graph.assets[current]
        for dep in (*node.deps, *EXTRA_DEPS.get(current, ())):
            if graph.assets[dep].partitions is None:
                keys: list[str | None] = [None]
            else:
                keys = [key] if key is not None else instances.get(dep, [])
            for found in ((dep, k) for k in keys):
                if found not in seen:
                    seen.add(found)
                    stack.append(found)
    return seen


def prerequisites(steps: list[Step], graph: Graph) -> list[set[int]]:
    """For each step, the steps that build something it reads: it starts once they ended.
    Independent steps (datasets, the list of unread files) all go at once; the run queue
    decides how many run."""
    builder: dict[Instance, int] = {}
    instances: dict[str, list[str | None]] = {}
    for index, step in enumerate(steps):
        for asset, partition in step.stale:
            builder[asset, partition] = index
            instances.setdefault(asset, []).append(partition)
    # the erasure of forgotten senders goes first, as in `make demo`: it needs the lake to say
    # which episodes were theirs before the runs after it rebuild them (not a graph edge)
    first = {i for i, step in enumerate(steps) if step.job == ERASURE_JOB}
    needs = []
    for index, step in enumerate(steps):
        read = set().union(*(upstream(graph, instances, a, p) for a, p in step.stale))
        needs.append(({builder[i] for i in read if i in builder} | first) - {index})
    return needs


class StepRuns:
    """A step's jobs as runs on the cluster, one after another (a dataset, then its benchmark)."""

    def __init__(
        self, step: Step, graph: Graph, configs: dict[str, Any], tags: dict[str, str]
    ) -> None:
        self.step, self.tags = step, tags
        self.jobs = []
        for job in (step.job, *step.then):
            stale = sorted({asset for asset, _ in step.stale if asset in graph.jobs[job]})
            if stale:
                self.jobs.append((job, stale, run_config(graph, stale, configs)))
        self.run_id: str | None = None
        self.ok: bool | None = None if self.jobs else True

    def advance(self, instance: dg.DagsterInstance, submit: Submit) -> bool:
        """Submits the next run once the last one succeeded; whether the step is over."""
        if self.ok is not None:
            return True
        if self.run_id is not None:
            run = instance.get_run_by_id(self.run_id)
            if run is None or run.status not in FINISHED_STATUSES:
                return False
            if run.status != dg.DagsterRunStatus.SUCCESS:
                self.ok = False  # later jobs of the step would build on what failed
                return True
        if not self.jobs:
            self.ok = True
            return True
        job, assets, config = self.jobs.pop(0)
        self.run_id = submit(job, assets, {**partition_tags(self.step), **self.tags}, config)
        return False


def dependents(needs: list[set[int]]) -> list[int]:
    """How many steps wait, however indirectly, on each step."""
    counts = []
    for index in range(len(needs)):
        found: set[int] = set()
        frontier = {i for i, need in enumerate(needs) if index in need}
        while frontier:
            found |= frontier
            frontier = {i for i, need in enumerate(needs) if need & frontier} - found
        counts.append(len(found))
    return counts


def run_steps(
    steps: list[Step], graph: Graph, configs: dict[str, Any], instance: dg.DagsterInstance,
    submit: Submit, report: Callable[[Step, bool], None],
) -> None:  # fmt: skip
    """Runs each step once every step it reads from has ended (as `make demo` does, a failed
    dataset does not stop the cross-dataset outputs); reports each as it ends.

    Runs start in the order of the run queue, so the steps others wait on go first: each run
    has a priority (how many steps wait on it), and a step nothing waits on is submitted only
    once every step something waits on has been (the list of unread files, say, would else
    take a run slot from a dataset's run)."""
    needs = prerequisites(steps, graph)
    waited_on = dependents(needs)
    waiting = dict(enumerate(steps))
    running: dict[int, StepRuns] = {}
    ended: set[int] = set()
    while waiting or running:
        ready = [i for i in waiting if needs[i] <= ended]
        blocking = any(waited_on[i] for i in waiting)
        for index in sorted(ready, key=lambda i: -waited_on[i]):
            if waited_on[index] or not blocking:
                tags = {"dagster/priority": str(waited_on[index])}
                running[index] = StepRuns(waiting.pop(index), graph, configs, tags)
        for index, runs in list(running.items()):
            if runs.advance(instance, submit):
                del running[index]
                ended.add(index)
                report(runs.step, bool(runs.ok))
        if running:
            time.sleep(POLL_SECONDS)


def materialize(
    plan: Plan, graph: Graph, configs: dict[str, Any], stamps: Any, data_dir: Path,
    submit: Submit, explain: bool = False,
) -> dict[str, bool]:  # fmt: skip
    """The cluster's `demo_runs.materialize`: the same plan, stamps and printed lines."""
    instance = dg.DagsterInstance.get()
    register_partitions(plan, graph, instance)
    outcome: dict[str, bool] = {}

    def report(step: Step, ok: bool) -> None:
        outcome[step.name] = ok
        finish_step(step, ok, plan, graph, stamps, data_dir)

    for step in plan.steps:
        if not step.stale:
            print(f"  up to date {step.name}", flush=True)
        elif explain:
            explain_step(step)
    run_steps([step for step in plan.steps if step.stale], graph, configs, instance, submit, report)
    return outcome


def build(
    paths: Paths, submit: Submit, overrides: dict[str, Any] | None = None, force: bool = False,
    explain: bool = False,
) -> dict[str, bool]:  # fmt: skip
    """What `make demo` builds, on the cluster: returns whether each step succeeded."""
    batches = land_telemetry(paths)
    data_dir = paths.lake.parent
    graph = load_graph(data_dir)
    # an instance without runs has not seen these outputs (a new database): build them again
    force = force or not dg.DagsterInstance.get().get_runs_count()
    planned, configs, stamps = rerun_plan(paths, graph, overrides or {}, batches, force)
    if planned.up_to_date:
        print(f"  up to date: {len(planned.fingerprints)} outputs, nothing to run", flush=True)
        return {}
    return materialize(planned, graph, configs, stamps, data_dir, submit, explain)
