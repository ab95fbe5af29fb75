"""The cluster's run launcher (cluster/launcher.py), on a throwaway SQLite instance: a run's
process, forked from the forkserver, runs it as Dagster's own run process does; run monitoring
sees it end or die; a terminate request stops it."""

import os
import signal
import time
from collections.abc import Iterator
from typing import Any

import dagster as dg
import pytest
from dagster._core.definitions.reconstruct import ReconstructableJob
from dagster._core.launcher.base import WorkerStatus

from bigaction_assets.cluster.launcher import PID_TAG, ForkedRunLauncher

LAUNCHER = {"module": "bigaction_assets.cluster.launcher", "class": "ForkedRunLauncher"}
# as in the cluster's settings: a killed run's log tail would complain of its vanished file
NO_LOGS = {
    "module": "dagster._core.storage.noop_compute_log_manager",
    "class": "NoOpComputeLogManager",
}


class WaitConfig(dg.Config):
    seconds: float = 0.0


@dg.op
def wait_a_while(config: WaitConfig) -> int:
    time.sleep(config.seconds)
    return os.getpid()


@dg.job(executor_def=dg.in_process_executor)  # one process: a kill -9 leaves no step behind
def waiting() -> None:
    wait_a_while()


@pytest.fixture(scope="module")
def instance() -> Iterator[dg.DagsterInstance]:
    settings = {"run_launcher": LAUNCHER, "compute_logs": NO_LOGS}
    with dg.instance_for_test(overrides=settings) as instance:
        yield instance


def launch(instance: dg.DagsterInstance, seconds: float) -> dg.DagsterRun:
    run = instance.create_run_for_job(
        job_def=waiting,
        run_config={"ops": {"wait_a_while": {"config": {"seconds": seconds}}}},
        # by this file's path: the forked process imports no test module by name
        job_code_origin=ReconstructableJob.for_file(__file__, "waiting").get_python_origin(),
    )
    instance.launch_run(run.run_id, workspace=None)  # type: ignore[arg-type]  # not read here
    return run


def wait_for(instance: dg.DagsterInstance, run_id: str, done: set[dg.DagsterRunStatus]) -> Any:
    deadline = time.monotonic() + 120
    while (run := instance.get_run_by_id(run_id)).status not in done:
        assert time.monotonic() < deadline, f"run {run_id} still {run.status}"
        time.sleep(0.2)
    return run


def wait_for_health(launcher: ForkedRunLauncher, run: dg.DagsterRun) -> Any:
    """The launcher's health of `run` once its process is no longer running."""
    deadline = time.monotonic() + 30
    while (health := launcher.check_run_worker_health(run)).status == WorkerStatus.RUNNING:
        assert time.monotonic() < deadline, f"run process of {run.run_id} still running"
        time.sleep(0.1)
    return health


FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def test_a_run_goes_in_a_forked_process_and_monitoring_sees_it_end(
    instance: dg.DagsterInstance,
) -> None:
    run = wait_for(instance, launch(instance, 0).run_id, FINISHED)
    assert run.status == dg.DagsterRunStatus.SUCCESS
    pid = int(run.tags[PID_TAG])
    assert pid != os.getpid()
    records = instance.get_records_for_run(run.run_id).records
    events = [record.event_log_entry.dagster_event for record in records]
    messages = [event.message for event in events if event is not None]
    assert f"Started process for run (pid: {pid})." in messages, "Dagster's own run body"
    launcher = instance.run_launcher
    assert isinstance(launcher, ForkedRunLauncher)
    # the run reports SUCCESS a moment before its process has exited
    health = wait_for_health(launcher, run)
    assert health.status == WorkerStatus.SUCCESS, health.msg
    # a launcher that did not start it (the daemon restarted) knows it only by its pid
    assert ForkedRunLauncher().check_run_worker_health(run).status == WorkerStatus.FAILED


def test_a_run_process_killed_is_reported_failed_to_run_monitoring(
    instance: dg.DagsterInstance,
) -> None:
    run = wait_for(instance, launch(instance, 60).run_id, {dg.DagsterRunStatus.STARTED})
    launcher = instance.run_launcher
    assert launcher.check_run_worker_health(run).status == WorkerStatus.RUNNING
    assert ForkedRunLauncher().check_run_worker_health(run).status == WorkerStatus.RUNNING
    os.kill(int(run.tags[PID_TAG]), signal.SIGKILL)
    assert isinstance(launcher, ForkedRunLauncher)
    health = wait_for_health(launcher, run)
    assert health.status == WorkerStatus.FAILED
    assert "-9" in (health.msg or "")


def test_terminate_stops_the_run_process_and_cancels_the_run(
    instance: dg.DagsterInstance,
) -> None:
    run = wait_for(instance, launch(instance, 60).run_id, {dg.DagsterRunStatus.STARTED})
    started = time.monotonic()
    assert instance.run_launcher.terminate(run.run_id)
    run = wait_for(instance, run.run_id, FINISHED)
    assert run.status == dg.DagsterRunStatus.CANCELED
    assert time.monotonic() - started < 30, "stopped, not waited out"
    assert not instance.run_launcher.terminate(run.run_id), "a finished run is left alone"
