"""The cluster's run launcher: each run's process is forked from one that has already imported
Dagster and the code location, instead of being a new interpreter that imports them again.

Dagster's default launcher asks the code server to start a run, and the code server spawns a
fresh Python for it (multiprocessing's `spawn`, fixed in Dagster), which imports Dagster and the
project and loads the definitions before its first step: ~5 s of CPU a run, and 8-11 s between a
run's launch and its first step while runs started together share the cores
(benchmarks/README.md#clusterpy). Here the daemon launches runs through a multiprocessing
forkserver: one process that imports all of that once (`run_process.py`), and forks a child per
run, which runs what `dagster api execute_run` runs (Dagster's own run body: the same events,
executor and run monitoring). The children are the daemon's, on the daemon's machine (the code
server still serves the definitions to the webserver and the daemon); a changed code location
needs the daemon restarted, as it needs the workers restarted (`make cluster-down`, then
`make cluster`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagster._core.launcher.base import (
    CheckRunHealthResult,
    LaunchRunContext,
    RunLauncher,
    WorkerStatus,
)
from dagster._core.storage.dagster_run import DagsterRun
from dagster._serdes import ConfigurableClass, ConfigurableClassData, serialize_value

PRELOAD = ["bigaction_assets.cluster.run_process"]
"""What the forkserver imports once; each run's process starts from there."""
KEPT_EXIT_CODES = 1000
PID_TAG = "bigaction/run_process_pid"
"""The run's process, for a terminate request from another process (the webserver's)."""


class ForkedRunLauncher(RunLauncher, ConfigurableClass):
    """Runs in processes forked from a forkserver that has loaded the code location."""

    def __init__(self, inst_data: ConfigurableClassData | None = None) -> None:
        self._inst_data = inst_data
        self._processes: dict[str, Any] = {}
        self._exit_codes: dict[str, int | None] = {}
        self._lock = threading.Lock()  # the daemon launches from several threads
        self._context: Any = None
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict[str, Any]:
        return {}

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData | None, config_value: Mapping[str, Any]
    ) -> ForkedRunLauncher:
        return cls(inst_data=inst_data)

    def _forkserver(self) -> Any:
        if self._context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(PRELOAD)
            self._context = context
        return self._context

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        ref = serialize_value(self._instance.get_ref())
        with self._lock:
            self._forget_ended()
            process = self._forkserver().Process(
                target=_run, args=(run.run_id, ref), name=f"run-{run.run_id[:8]}"
            )
            process.start()
            self._processes[run.run_id] = process
        self._instance.add_run_tags(run.run_id, {PID_TAG: str(process.pid)})

    def _forget_ended(self) -> None:
        """Ended processes give back their handles; their exit codes are kept a while for run
        monitoring's next look."""
        for run_id, process in list(self._processes.items()):
            if not process.is_alive():
                self._exit_codes[run_id] = process.exitcode
                process.close()
                del self._processes[run_id]
        while len(self._exit_codes) > KEPT_EXIT_CODES:
            self._exit_codes.pop(next(iter(self._exit_codes)))

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: DagsterRun) -> CheckRunHealthResult:
        """What run monitoring asks of a STARTED run: is its process still there?"""
        with self._lock:
            self._forget_ended()
            if run.run_id in self._processes:
                return CheckRunHealthResult(WorkerStatus.RUNNING)
            code = self._exit_codes.get(run.run_id)
        if code is not None:
            status = WorkerStatus.SUCCESS if code == 0 else WorkerStatus.FAILED
            return CheckRunHealthResult(status, f"run process exited with code {code}")
        # launched by an earlier daemon: its process, if still there, is known by its pid
        pid = run.tags.get(PID_TAG)
        if pid is not None and _alive(int(pid)):
            return CheckRunHealthResult(WorkerStatus.RUNNING)
        return CheckRunHealthResult(WorkerStatus.FAILED, f"run process {pid} is gone")

    def terminate(self, run_id: str) -> bool:
        """Asks the run's process to stop (SIGTERM, which Dagster takes as an interrupt: the run
        revokes its steps' tasks and ends CANCELED)."""
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished or PID_TAG not in run.tags:
            return False
        self._instance.report_run_canceling(run)
        try:
            os.kill(int(run.tags[PID_TAG]), signal.SIGTERM)
        except ProcessLookupError:
            return False
        return True


def _run(run_id: str, instance_ref: str) -> None:
    """In the forked child, where the forkserver has imported run_process already."""
    from bigaction_assets.cluster.run_process import execute_run

    execute_run(run_id, instance_ref)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
