"""Watching a running cluster from a test: its Dagster instance, runs, steps and processes."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from dagster._core.storage.dagster_run import FINISHED_STATUSES

from bigaction_assets.cluster.layout import ClusterLayout, ClusterState
from bigaction_assets.lakefs import LakeRoot

FINISHED = FINISHED_STATUSES


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.3)


def events(instance: dg.DagsterInstance, run_id: str, kind: str) -> list[dg.EventLogEntry]:
    return [
        entry
        for entry in instance.all_logs(run_id)
        if entry.dagster_event and entry.dagster_event.event_type_value == kind
    ]


def step_span(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float] | None:
    """When a step started and ended in a run (None: it never started)."""
    starts = [e.timestamp for e in events(instance, run_id, "STEP_START") if e.step_key == step]
    ends = [
        e.timestamp
        for kind in ("STEP_SUCCESS", "STEP_FAILURE")
        for e in events(instance, run_id, kind)
        if e.step_key == step
    ]
    return (min(starts), max(ends)) if starts and ends else None


def celery_workers(instance: dg.DagsterInstance, run_id: str, step: str | None = None) -> set[str]:
    """The Celery workers (`name@host`) that took the run's steps (or one step)."""
    found = set()
    for entry in events(instance, run_id, "ENGINE_EVENT"):
        metadata = entry.dagster_event.engine_event_data.metadata
        if "Celery worker" in metadata and (step is None or entry.step_key == step):
            found.add(str(metadata["Celery worker"].value))
    return found


def run_failure(instance: dg.DagsterInstance, run_id: str) -> str:
    """Every error the run and its steps recorded, as text."""
    texts = []
    for kind in ("STEP_FAILURE", "PIPELINE_FAILURE"):
        for entry in events(instance, run_id, kind):
            error = getattr(entry.dagster_event.event_specific_data, "error", None)
            texts.append(error.to_string() if error else entry.message or "")
    return "\n".join(texts)


def wait_for_run(instance: dg.DagsterInstance, run_id: str, timeout: float) -> dg.DagsterRun:
    def finished() -> dg.DagsterRun | None:
        run = instance.get_run_by_id(run_id)
        return run if run is not None and run.status in FINISHED else None

    return wait_for(finished, timeout, f"run {run_id}")


def wait_for_step_start(
    instance: dg.DagsterInstance, run_id: str, step: str, timeout: float
) -> None:
    wait_for(
        lambda: any(e.step_key == step for e in events(instance, run_id, "STEP_START")),
        timeout,
        f"step {step} of run {run_id}",
    )


def partitions_readable(lake: Path | LakeRoot) -> dict[str, int]:
    """Rows of every partition file or object a reader sees (`*.parquet`, not hidden), by its
    path in the lake; fails on a damaged one."""
    if isinstance(lake, Path):
        return {str(path.relative_to(lake)): pq.ParquetFile(path).metadata.num_rows
                for path in sorted(lake.rglob("*.parquet"))}  # fmt: skip
    selector = pafs.FileSelector(lake.base, recursive=True, allow_not_found=True)
    keys = sorted(
        info.path for info in lake.filesystem.get_file_info(selector)
        if info.base_name.endswith(".parquet") and not info.base_name.startswith(".")
    )  # fmt: skip
    rows = {}
    for key in keys:
        with lake.open(key) as handle:
            rows[key.removeprefix(lake.base + "/")] = pq.ParquetFile(handle).metadata.num_rows
    return rows


def leftover_processes(layout: ClusterLayout) -> list[str]:
    """Live processes that belong to the cluster: any whose command line or working folder
    is in its folder (PostgreSQL, the Dagster processes, Celery workers), or Redis on its port."""
    root = str(layout.data_dir)
    state = ClusterState.load(layout.state_file)
    redis_listen = f"127.0.0.1:{state.ports.redis}" if state else None
    listing = subprocess.run(
        ["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for line in listing.splitlines():
        pid, stat, args = ([*line.split(None, 2), "", ""])[:3]
        if stat.startswith("Z") or int(pid) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        redis = redis_listen is not None and args.startswith(f"redis-server {redis_listen}")
        if root in args or cwd.startswith(root) or redis:
            found.append(line.strip())
    return found
