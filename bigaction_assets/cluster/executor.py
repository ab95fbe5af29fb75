"""Dagster's Celery executor, watching the worker that runs each step.

A task is acknowledged when its step starts (never run twice), and a worker fetches a task only
when it has a free process, so a worker that dies holds nothing but the step it was running.
Celery itself fails that step when only the worker's pool process dies (an out-of-memory kill);
when the whole worker dies (its machine, SIGKILL), nothing would ever answer for the task and the
run would wait forever, so the run pings the worker of each started step and fails the step once
that worker stops answering. A rerun then builds the partition again: lake writes are atomic.
"""

from __future__ import annotations

import time
from typing import Any

import dagster as dg
from celery import Celery
from celery.result import AsyncResult
from dagster._core.execution.retries import RetryMode
from dagster._grpc.types import ExecuteStepArgs
from dagster._serdes import pack_value
from dagster_celery.config import TASK_EXECUTE_PLAN_NAME
from dagster_celery.executor import CELERY_CONFIG, CeleryExecutor
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bigaction_assets.cluster.execution_loop import celery_execution_loop

WATCH_SECONDS = 3.0
"""How often the worker of a started step is pinged."""
PING_TIMEOUT = 2.0
MISSES = 3
"""Unanswered pings in a row after which a worker counts as gone (~10 s)."""


CONNECTION_ERRORS = (OperationalError, RedisConnectionError, RedisTimeoutError, OSError)


class WorkerLost(RuntimeError):
    """The worker that had started a step stopped answering; the step did not finish."""


class BrokerUnreachable(RuntimeError):
    """The broker (Redis) stayed away longer than the retries wait for it."""


def _unreachable(app: Celery, step_key: str, exc: Exception) -> BrokerUnreachable:
    return BrokerUnreachable(
        f"the Celery broker and result store {app.conf.result_backend} did not answer while "
        f"step {step_key!r} was running, through every retry ({exc}); the step may have "
        "finished, but its run cannot know: run the partition again once Redis is back"
    )


class WatchedResult:
    """A step's Celery result that also becomes ready when the worker running it is gone."""

    def __init__(self, result: AsyncResult, app: Celery, step_key: str) -> None:
        self._result, self._app, self._step_key = result, app, step_key
        self._next_check = time.monotonic() + WATCH_SECONDS
        self._misses = 0
        self.lost_worker: str | None = None

    def ready(self) -> bool:
        try:
            return self._ready()
        except CONNECTION_ERRORS as exc:  # Celery's own retries (CELERY_SETTINGS) ran out
            raise _unreachable(self._app, self._step_key, exc) from exc

    def _ready(self) -> bool:
        if self.lost_worker is not None or self._result.ready():
            return True
        if time.monotonic() < self._next_check:
            return False
        self._next_check = time.monotonic() + WATCH_SECONDS
        info = self._result.info if self._result.state == "STARTED" else None
        worker = info.get("hostname") if isinstance(info, dict) else None
        if worker is None:  # still queued: waiting for a worker is what a queue is for
            self._misses = 0
            return False
        try:
            answered = self._app.control.ping(destination=[worker], timeout=PING_TIMEOUT)
        except CONNECTION_ERRORS:  # the broker is away: no news of the worker either way
            return False
        self._misses = 0 if answered else self._misses + 1
        if self._misses >= MISSES:
            self.lost_worker = worker
            return True
        return False

    def get(self) -> Any:
        if self.lost_worker is not None:
            raise WorkerLost(
                f"Celery worker {self.lost_worker} stopped answering while it ran step "
                f"{self._step_key!r} ({MISSES} pings, {WATCH_SECONDS:.0f} s apart): the step did "
                "not finish and is not retried; run the partition again"
            )
        try:
            return self._result.get()
        except CONNECTION_ERRORS as exc:
            raise _unreachable(self._app, self._step_key, exc) from exc

    def revoke(self) -> None:
        self._result.revoke()


def _send_task(
    app: Celery, plan_context: Any, steps: list[Any], queue: str, priority: int, known_state: Any
) -> AsyncResult:
    """dagster-celery's task for `steps` (its `_submit_task`, for one step or several)."""
    job = plan_context.reconstructable_job
    args = ExecuteStepArgs(
        job_origin=job.get_python_origin(),
        run_id=plan_context.dagster_run.run_id,
        step_keys_to_execute=[step.key for step in steps],
        instance_ref=plan_context.instance.get_ref(),
        retry_mode=plan_context.executor.retries.for_inner_plan(),
        known_state=known_state,
        print_serialized_events=True,  # not read by the task
    )
    task = app.signature(
        TASK_EXECUTE_PLAN_NAME,
        kwargs={"execute_step_args_packed": pack_value(args), "executable_dict": job.to_dict()},
        immutable=True,
    )
    return task.apply_async(priority=priority, queue=queue, routing_key=f"{queue}.execute_plan")


def _watched_submit(
    app: Celery, plan_context: Any, steps: list[Any], queue: str, priority: int, known_state: Any
) -> WatchedResult:
    names = ", ".join(step.key for step in steps)
    try:
        result = _send_task(app, plan_context, steps, queue, priority, known_state)
    except CONNECTION_ERRORS as exc:
        raise _unreachable(app, names, exc) from exc
    return WatchedResult(result, app, names)


class WatchedCeleryExecutor(CeleryExecutor):
    def __init__(self, check_batches: int, **celery: Any) -> None:
        super().__init__(**celery)
        self.check_batches = check_batches

    def execute(self, plan_context: Any, execution_plan: Any) -> Any:
        return celery_execution_loop(
            plan_context, execution_plan, _watched_submit, self.check_batches
        )


CHECK_BATCHES = 2
"""Tasks that the asset checks ready at once are dealt over: one per worker of `make cluster`."""


@dg.executor(
    name="celery",
    config_schema={
        **CELERY_CONFIG,
        "check_batches": dg.Field(
            int,
            default_value=CHECK_BATCHES,
            description="The asset checks that become ready together go to the workers in at "
            "most this many tasks (each task pays a worker's fixed cost once); every step that "
            "materializes assets has a task of its own.",
        ),
    },
    requirements=dg.multiple_process_executor_requirements(),
)
def watched_celery_executor(init_context: dg.InitExecutorContext) -> WatchedCeleryExecutor:
    """Steps as Celery tasks (dagster-celery's executor and configuration), each watched."""
    config = init_context.executor_config
    return WatchedCeleryExecutor(
        broker=config.get("broker"),
        backend=config.get("backend"),
        config_source=config.get("config_source"),
        include=config.get("include"),
        retries=RetryMode.from_config(config["retries"]),
        check_batches=config["check_batches"],
    )
