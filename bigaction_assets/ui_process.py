"""`make ui` as a child process, watched from outside as a user watches it (tests, benchmark)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
from dagster._core.scheduler.instigation import InstigatorType

LANDING_SENSOR = "landing_datasets_sensor"
STOP_SECONDS = 30


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _signal_group(pgid: int, sig: int) -> bool:
    """Sends `sig` to the process group the UI leads (0: none, a probe); whether any member
    was left to receive it."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


@contextmanager
def running_ui(env: dict[str, str], log: Path, timeout: float = 180) -> Iterator[int]:
    """`python -m bigaction_assets.ui` on a free port with `env`, its output in `log`; yields
    the port once the UI serves it.

    It leads a process group of its own (`dagster dev`, its webserver, daemon and code server,
    and the runs they launch), so stopping it stops them all, and only them. Only once it serves
    may another process open its Dagster instance: two processes creating the same fresh
    SQLite storage at once break its migrations.
    """
    port = free_port()
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "bigaction_assets.ui", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_for(lambda: _serving(port) or process.poll() is not None, timeout, "the UI")
        if process.poll() is not None:
            raise RuntimeError(f"the UI stopped with exit code {process.returncode}: see {log}")
        yield port
    finally:
        _signal_group(process.pid, signal.SIGTERM)  # `dagster dev` shuts its children down
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=STOP_SECONDS)
        deadline = time.monotonic() + STOP_SECONDS
        while _signal_group(process.pid, 0) and time.monotonic() < deadline:
            time.sleep(0.2)  # the children are still shutting down
        _signal_group(process.pid, signal.SIGKILL)
        process.wait()


def _serving(port: int) -> bool:
    """Whether Dagster's webserver answers on `port`."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def wait_for(
    condition: Callable[[], object], timeout: float, what: str, poll: float = 0.2
) -> object:
    """The first truthy value of `condition()`, polled until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:.0f} s")
        time.sleep(poll)


def sensor_ticks(instance: dg.DagsterInstance, name: str) -> int:
    """How many ticks the daemon has recorded for the sensor called `name`."""
    states = instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
    for state in states:
        if state.instigator_name == name:
            return len(instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=5))
    return 0


def runs_since(instance: dg.DagsterInstance, since: float) -> list[dg.RunRecord]:
    """Every run created after `since` (a Unix time), oldest first."""
    records = instance.get_run_records(filters=dg.RunsFilter(created_after=_utc(since)))
    return sorted(records, key=lambda record: record.create_timestamp.timestamp())


def drop_file(landing: Path, relative: str, content: bytes) -> Path:
    """Puts a file into landing whole: written beside it first, then renamed into place, so a
    sensor never reads half of it."""
    target = landing / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = landing / f".{target.name}.incoming"
    staging.write_bytes(content)
    staging.rename(target)
    return target
