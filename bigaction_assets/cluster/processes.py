"""The cluster's Dagster processes and Celery workers: started detached, stopped by pid file.

Each leads a process group of its own (a code server's run workers, a Celery worker's pool
children are in it), so stopping one stops all it started, and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from bigaction_assets.cluster.backing import ServiceError
from bigaction_assets.cluster.layout import LOCATION_NAME, WORKERS, ClusterLayout, ClusterState

STOP_SECONDS = 30
CELERY_APP = "bigaction_assets.cluster.worker"
_children: dict[int, subprocess.Popen[bytes]] = {}  # reaped on stop when we started them


def _program(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def worker_names(count: int = WORKERS) -> list[str]:
    return [f"worker{number}" for number in range(1, count + 1)]


def commands(layout: ClusterLayout, state: ClusterState) -> dict[str, list[str]]:
    """Every process of the cluster by name, in the order they start."""
    ports = state.ports
    listen = ["-h", "127.0.0.1"]
    workspace = ["-w", str(layout.workspace)]
    found = {
        "code-server": [
            _program("dagster"), "code-server", "start", "-m", "bigaction_assets.definitions",
            "--location-name", LOCATION_NAME, *listen, "-p", str(ports.code_server),
        ],
        # a pooled connection older than 5 s is replaced before use: after PostgreSQL
        # restarts, the webserver's first requests would otherwise fail on dead connections
        "webserver": [
            _program("dagster-webserver"), *workspace, *listen, "-p", str(ports.webserver),
            "--db-pool-recycle", "5",
        ],
        "daemon": [_program("dagster-daemon"), "run", *workspace],
    }  # fmt: skip
    for name in worker_names():
        # one task at a time per worker: two workers are two tasks at once on two cores
        found[name] = [
            _program("dagster-celery"), "worker", "start", "-A", CELERY_APP,
            "-y", str(layout.celery_config), "-n", name, "--", "--concurrency", "1",
        ]  # fmt: skip
    return found


# Opening the instance creates what its storages lack (runs, events, schedules) and nothing else.
_OPEN_INSTANCE = "import dagster as dg; dg.DagsterInstance.get().dispose()"
TABLES_LOG = "dagster-tables.log"


def create_dagster_tables(layout: ClusterLayout, env: dict[str, str]) -> None:
    """Dagster's tables in PostgreSQL, made by one process before the services start.

    Each service creates the tables it finds missing when it opens the instance; started
    together on an empty database, two of them can create the same table at once, and the one
    that loses stops (seen: a Celery worker, on `CREATE TABLE jobs`)."""
    layout.logs.mkdir(parents=True, exist_ok=True)
    log = layout.logs / TABLES_LOG
    with open(log, "ab") as out:
        done = subprocess.run(
            [sys.executable, "-c", _OPEN_INSTANCE],
            env=env,
            cwd=layout.data_dir,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise ServiceError(f"Dagster's tables could not be created in PostgreSQL ({log}):\n{tail}")


def pid_of(layout: ClusterLayout, name: str) -> int | None:
    path = layout.pids / f"{name}.pid"
    return int(path.read_text()) if path.is_file() else None


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is left (zombies of our own children aside)."""
    child = _children.get(pgid)
    if child is not None and child.poll() is not None and not _members(pgid):
        return False
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return bool(_members(pgid))


def _members(pgid: int) -> list[int]:
    """Live (not zombie) processes in the group, from /proc."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def start(layout: ClusterLayout, name: str, argv: list[str], env: dict[str, str]) -> int:
    """Starts `argv` as the leader of a new session, its output appended to `logs/<name>.log`."""
    existing = pid_of(layout, name)
    if existing is not None and group_alive(existing):
        return existing
    layout.logs.mkdir(parents=True, exist_ok=True)
    layout.pids.mkdir(parents=True, exist_ok=True)
    with open(layout.logs / f"{name}.log", "ab") as log:
        process = subprocess.Popen(
            argv,
            env=env,
            cwd=layout.data_dir,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    _children[process.pid] = process
    (layout.pids / f"{name}.pid").write_text(str(process.pid))
    return process.pid


def kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def stop(layout: ClusterLayout, names: list[str], timeout: float = STOP_SECONDS) -> None:
    """SIGTERM to each named process group at once, SIGKILL to whatever is left of them after
    `timeout` seconds."""
    groups = {name: pid for name in names if (pid := pid_of(layout, name)) is not None}
    for pgid in groups.values():
        kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while any(group_alive(pgid) for pgid in groups.values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    for name, pgid in groups.items():
        if group_alive(pgid):
            print(f"  {name} did not stop within {timeout:.0f} s of SIGTERM: killed", flush=True)
        kill_group(pgid, signal.SIGKILL)
        while group_alive(pgid):
            time.sleep(0.1)
        child = _children.pop(pgid, None)
        if child is not None:
            child.wait()
        (layout.pids / f"{name}.pid").unlink(missing_ok=True)
