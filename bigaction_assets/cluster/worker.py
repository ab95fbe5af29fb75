"""The Celery app the cluster's workers run: dagster-celery's step task, with what every step
would otherwise rebuild kept for the life of the worker process.

dagster-celery's own task (`dagster_celery.app`) starts every step from nothing: it opens the
Dagster instance (three storages, each checking its tables), and loads the code location twice
(`create_execution_plan` and `execute_plan_iterator` ask for the definitions with different
repository load data, so Dagster's one-entry cache misses both times), each load ~0.5-1 s of CPU
for ~25 steps a dataset. And every event it records opens a new PostgreSQL connection (~25 a
step). Measured in a worker (cProfile, benchmarks/README.md#clusterpy): ~55% of a step's time was
loading the definitions, ~14% opening connections.

Here a worker process loads the code location once (its modules are imported once anyway: a
changed code location needs the workers restarted, as before), opens the instance once and keeps
one pooled connection per storage, checked with a `SELECT 1` before each use so that a
PostgreSQL restart costs a reconnect, not a failed step. The task's name, arguments, events and
results are dagster-celery's; it also runs several steps in one task (a run's batch of asset
checks, cluster/execution_loop.py).
"""

from __future__ import annotations

import functools
from collections.abc import Set
from typing import Any

import dagster._check as check
from celery import Task
from dagster import DagsterInstance
from dagster._core.definitions.job_base import IJob
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.events import EngineEventData
from dagster._core.execution.api import create_execution_plan, execute_plan_iterator
from dagster._core.instance.ref import InstanceRef
from dagster._grpc.types import ExecuteStepArgs
from dagster._serdes import deserialize_value, serialize_value, unpack_value
from dagster_celery.config import TASK_EXECUTE_PLAN_NAME
from dagster_celery.core_execution_loop import DELEGATE_MARKER
from dagster_celery.executor import CeleryExecutor
from dagster_celery.make_app import make_app

from bigaction_assets.cluster.pooled_storage import pool_connections


@functools.cache
def _instance(ref_json: str) -> DagsterInstance:
    """The worker's instance for `ref_json`, opened once, its storages on pooled connections."""
    instance = DagsterInstance.from_ref(deserialize_value(ref_json, InstanceRef))
    # the cluster's dagster.yaml pools already (pooled_storage.py); an instance configured with
    # dagster-postgres's own `storage: postgres` is pooled here
    pool_connections(instance)
    return instance


@functools.lru_cache(maxsize=4)
def _repository(repository: ReconstructableRepository) -> Any:
    return repository.get_definition()


@functools.lru_cache(maxsize=32)
def _job_definition(job: ReconstructableJob) -> Any:
    return _repository(job.repository).get_maybe_subset_job_def(
        job.job_name, job.op_selection, job.asset_selection, job.asset_check_selection
    )


class LoadedJob(IJob):
    """A run's job as this worker process loaded it: the definitions are not loaded again."""

    def __init__(self, job: ReconstructableJob) -> None:
        self._job = job

    def get_definition(self) -> Any:
        return _job_definition(self._job)

    def get_repository_definition(self) -> Any:
        return _repository(self._job.repository)

    def get_subset(self, **selection: Any) -> LoadedJob:
        return LoadedJob(self._job.get_subset(**selection))

    @property
    def op_selection(self) -> Set[str] | None:
        return self._job.op_selection

    @property
    def asset_selection(self) -> Any:
        return self._job.asset_selection

    @property
    def asset_check_selection(self) -> Any:
        return self._job.asset_check_selection


def execute_steps(task: Task, execute_step_args_packed: dict, executable_dict: dict) -> list[str]:
    """dagster-celery's `execute_plan` task body, on the worker process's instance and job."""
    args = unpack_value(
        check.dict_param(execute_step_args_packed, "execute_step_args_packed"),
        as_type=ExecuteStepArgs,
    )
    instance = _instance(serialize_value(args.instance_ref))
    job = LoadedJob(ReconstructableJob.from_dict(executable_dict))
    run = instance.get_run_by_id(args.run_id)
    check.invariant(run is not None, f"Could not load run {args.run_id}")
    assert run is not None
    plan = create_execution_plan(
        job,
        run.run_config,
        step_keys_to_execute=args.step_keys_to_execute,
        known_state=args.known_state,
    )
    step_keys = ", ".join(args.step_keys_to_execute or [])
    # one event per step, naming this worker: a batch of asset checks is several steps
    events = [
        instance.report_engine_event(
            f"Executing steps {step_keys} in celery worker",
            run,
            EngineEventData(
                {"step_keys": step_keys, "Celery worker": task.request.hostname},
                marker_end=DELEGATE_MARKER,
            ),
            CeleryExecutor,
            step_key=step_key,
        )
        for step_key in plan.step_keys_to_execute
    ]
    events += execute_plan_iterator(
        execution_plan=plan,
        job=job,
        dagster_run=run,
        instance=instance,
        retry_mode=args.retry_mode,
        run_config=run.run_config,
    )
    return [serialize_value(event) for event in events]


app = make_app()  # dagster-celery's routes and queue; the worker's -y config is read as before
execute_plan = app.task(bind=True, name=TASK_EXECUTE_PLAN_NAME)(execute_steps)
