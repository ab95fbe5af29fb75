"""A run's Celery execution loop: dagster-celery's, sending the steps that became ready together
in fewer tasks, and looking for finished ones ten times as often.

dagster-celery sends one task per step and looks at its tasks once a second. Measured on
`build_dataset` (benchmarks/README.md#clusterpy): 23 tasks a shard, each paying a worker's fixed
cost (~0.1-0.3 s once the worker keeps its code and instance, cluster/worker.py), and ~0.75 s
between a step's end and the next step's submission, on a chain of 7 waves. Here every step that
materializes assets still has a task of its own (it is the work, and what a pool such as `llm`
limits); the asset checks that became ready together share at most `check_batches` tasks (a
dataset's 12 checks after standardizing: 2 tasks, one per worker of `make cluster`); and results
are looked at every 0.1 s. Pools are claimed per step before anything is sent, as before; each
step's events, success or failure are its own.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import dagster._check as check
from celery.exceptions import TaskRevokedError
from dagster import AssetKey
from dagster._core.errors import DagsterSubprocessError
from dagster._core.events import DagsterEvent, EngineEventData
from dagster._core.execution.context.system import PlanOrchestrationContext
from dagster._core.execution.plan.instance_concurrency_context import InstanceConcurrencyContext
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster._utils.error import serializable_error_info_from_exc_info
from dagster_celery.core_execution_loop import (
    DELEGATE_MARKER,
    _get_run_priority,
    _get_step_priority,
)
from dagster_celery.make_app import make_app
from dagster_celery.tags import DAGSTER_CELERY_QUEUE_TAG, DAGSTER_CELERY_STEP_PRIORITY_TAG
from dagster_shared.serdes import deserialize_value

TICK_SECONDS = 0.1
"""How often the run looks at its tasks (dagster-celery: 1 s)."""

Submit = Callable[[Any, PlanOrchestrationContext, list[Any], str, int, Any], Any]


def materializes(layer: Any, step: Any) -> bool:
    """Whether the step materializes an asset (rather than only evaluating asset checks), by
    the job's asset layer."""
    keys = layer.get_selected_entity_keys_for_node(step.node_handle)
    return not keys or any(isinstance(key, AssetKey) for key in keys)


def batches(layer: Any, steps: Sequence[Any], check_batches: int) -> list[list[Any]]:
    """The tasks for steps ready at once: one per materializing step, the checks dealt over at
    most `check_batches` tasks (per queue, so a step's queue tag still holds)."""
    alone = [[step] for step in steps if materializes(layer, step)]
    checks: dict[str, list[Any]] = {}
    for step in steps:
        if not materializes(layer, step):
            checks.setdefault(step.tags.get(DAGSTER_CELERY_QUEUE_TAG, ""), []).append(step)
    for queued in checks.values():
        count = min(len(queued), max(1, check_batches))
        alone += [queued[start::count] for start in range(count)]
    return alone


def celery_execution_loop(
    context: PlanOrchestrationContext,
    execution_plan: ExecutionPlan,
    submit: Submit,
    check_batches: int,
) -> Iterator[DagsterEvent]:
    check.inst_param(context, "context", PlanOrchestrationContext)
    if execution_plan.step_keys_to_execute:
        check.invariant(
            execution_plan.artifacts_persisted,
            "Cannot use in-memory storage with Celery: steps run in other processes",
        )
    app = make_app(context.executor.app_args())  # type: ignore[attr-defined]
    default_priority = app.conf.task_default_priority
    errors: dict[str, Any] = {}
    with (
        InstanceConcurrencyContext(context.instance, context.dagster_run) as concurrency,
        execution_plan.start(
            retry_mode=context.executor.retries,
            sort_key_fn=lambda step: (
                -int(step.tags.get(DAGSTER_CELERY_STEP_PRIORITY_TAG, default_priority))
                - _get_run_priority(context)
            ),
            instance_concurrency_context=concurrency,
        ) as active,
    ):
        layer = context.job.get_definition().asset_layer
        yield from _drive(
            context, active, app, submit, lambda steps: batches(layer, steps, check_batches), errors
        )
        if errors:  # raised inside: the plan would otherwise fail on steps in an unknown state
            raise DagsterSubprocessError(
                "During celery execution errors occurred in workers:\n"
                + "\n".join(f"[{key}]: {error.to_string()}" for key, error in errors.items()),
                subprocess_error_infos=list(errors.values()),
            )


def _drive(
    context: PlanOrchestrationContext,
    active: Any,
    app: Any,
    submit: Submit,
    batched: Callable[[Sequence[Any]], list[list[Any]]],
    errors: dict[str, Any],
) -> Iterator[DagsterEvent]:
    """Until the plan is complete (or stopped) and no task is out: collect finished tasks, send
    what became ready."""
    in_flight: dict[tuple[str, ...], Any] = {}  # the step keys of a task -> its result
    stopping = False
    while (not active.is_complete and not stopping) or in_flight:
        if active.check_for_interrupts():
            yield DagsterEvent.engine_event(
                context,
                "Celery executor: received termination signal - revoking active tasks from workers",
                EngineEventData.interrupted([key for keys in in_flight for key in keys]),
            )
            stopping = True
            active.mark_interrupted()
            for result in in_flight.values():
                result.revoke()
        for keys, result in list(in_flight.items()):
            if result.ready():
                yield from _finished(context, active, keys, result, errors)
                del in_flight[keys]
                for key in keys:
                    active.verify_complete(context, key)
        yield from active.plan_events_iterator(context)
        if not (stopping or errors):  # nothing new once a step failed or the run is stopping
            for batch in batched(active.get_steps_to_execute()):
                yield from _send(context, active, app, submit, batch, in_flight)
        time.sleep(TICK_SECONDS)


def _send(
    context: PlanOrchestrationContext,
    active: Any,
    app: Any,
    submit: Submit,
    batch: list[Any],
    in_flight: dict[tuple[str, ...], Any],
) -> Iterator[DagsterEvent]:
    queue = batch[0].tags.get(DAGSTER_CELERY_QUEUE_TAG, app.conf.task_default_queue)
    for step in batch:
        yield DagsterEvent.engine_event(
            context.for_step(step),
            f'Submitting celery task for step "{step.key}" to queue "{queue}".',
            EngineEventData(marker_start=DELEGATE_MARKER),
        )
    default = app.conf.task_default_priority
    priority = max(_get_step_priority(context, step, default) for step in batch)
    try:
        in_flight[tuple(step.key for step in batch)] = submit(
            app, context, batch, queue, priority, active.get_known_state()
        )
    except Exception:
        yield DagsterEvent.engine_event(
            context,
            "Encountered error during celery task submission.",
            event_specific_data=EngineEventData.engine_error(
                serializable_error_info_from_exc_info(sys.exc_info())
            ),
        )
        raise


def _finished(
    context: PlanOrchestrationContext,
    active: Any,
    keys: tuple[str, ...],
    result: Any,
    errors: dict[str, Any],
) -> Iterator[DagsterEvent]:
    """A finished task's step events, or the error that ended it, recorded for each step."""
    try:
        step_events = result.get()
    except TaskRevokedError:
        step_events = []
        for key in keys:
            yield DagsterEvent.engine_event(
                context.for_step(active.get_step_by_key(key)),
                f'celery task for running step "{key}" was revoked.',
                EngineEventData(marker_end=DELEGATE_MARKER),
            )
    except Exception:
        step_events = []
        error = serializable_error_info_from_exc_info(sys.exc_info())
        errors.update(dict.fromkeys(keys, error))
    for serialized in step_events:
        event = deserialize_value(serialized, DagsterEvent)
        yield event
        active.handle_event(event)
