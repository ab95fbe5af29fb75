"""CPU seconds of each process of a local cluster, from /proc: where a build's CPU went.

On a 2-core machine two workers can only be twice as fast as one if everything else (run
processes, PostgreSQL, the daemon, the S3 server) takes little CPU beside them, so the benchmark
reports each service's share. A service's CPU is its whole process tree's: each live process's
own time plus that of the children it reaped (a run process, once it ends, is in its code
server's count), so differences between two snapshots count every process once.
"""

from __future__ import annotations

import os
import resource
from contextlib import closing
from pathlib import Path
from typing import Any

TICK = os.sysconf("SC_CLK_TCK")
SESSIONS = "postgres sessions"
MACHINE = "machine"


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds of the process and of its reaped children)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields from state on: ppid is 2nd; utime, stime, cutime, cstime are 12th-15th
    return int(fields[1]), sum(int(value) for value in fields[11:15]) / TICK


def _processes() -> dict[int, tuple[int, float]]:
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[int(entry.name)] = stat
    return found


def tree_seconds(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds of each named root's process tree (live processes and reaped children)."""
    processes = _processes()
    totals = dict.fromkeys(roots, 0.0)
    owner = {pid: name for name, pid in roots.items()}
    for pid, (_parent, seconds) in processes.items():
        walk, seen = pid, 0
        while walk not in owner and walk in processes and seen < 64:
            walk, seen = processes[walk][0], seen + 1
        if walk in owner:
            totals[owner[walk]] += seconds
    return totals


def cluster_roots(layout: Any) -> dict[str, int]:
    """The cluster's services by name: its Dagster processes and workers (pid files), PostgreSQL
    and Redis (their own pid files)."""
    roots = {path.stem: int(path.read_text()) for path in sorted(layout.pids.glob("*.pid"))}
    postmaster = layout.postgres_data / "postmaster.pid"
    if postmaster.is_file():
        roots["postgres"] = int(postmaster.read_text().split()[0])
    redis = layout.redis_dir / "redis.pid"
    if redis.is_file():
        roots["redis"] = int(redis.read_text())
    return roots


def own_seconds() -> float:
    """This process's CPU seconds, all threads (the benchmark's S3 server is one of them)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def machine_seconds() -> float:
    """CPU seconds every core of the machine has been busy (/proc/stat): beside the cluster's
    own, what other people's processes took meanwhile on a shared machine."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / TICK


def postgres_sessions(url: str) -> float:
    """Connections PostgreSQL has accepted so far (all databases): each one it forks a backend
    for, which costs it more CPU than most of the queries the connection then sends."""
    import psycopg2

    with closing(psycopg2.connect(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT sum(sessions) FROM pg_stat_database")
        return float(cursor.fetchone()[0] or 0)


class CpuMeter:
    """CPU seconds each service spent between `start()` and `stop()`, and the PostgreSQL
    sessions opened meanwhile (the meter's own two included)."""

    def __init__(self, layout: Any, postgres_url: str) -> None:
        self.layout, self.postgres_url = layout, postgres_url
        self.before: dict[str, float] = {}

    def _now(self) -> dict[str, float]:
        return {
            **tree_seconds(cluster_roots(self.layout)),
            "benchmark (S3 server)": own_seconds(),
            MACHINE: machine_seconds(),
            SESSIONS: postgres_sessions(self.postgres_url),
        }

    def start(self) -> None:
        self.before = self._now()

    def stop(self) -> dict[str, float]:
        after = self._now()
        return {name: round(after[name] - self.before.get(name, 0.0), 1) for name in after}
