"""PostgreSQL and Redis from Debian's packages, each with its data in the cluster's folder.

Both run as daemons of their own (a cluster outlives `make cluster`); PostgreSQL refuses to run as
root, so under root it runs as Debian's `postgres` user, owning only its data folder.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from bigaction_assets.cluster.layout import (
    DATABASE,
    DATABASE_USER,
    LLM_CACHE_DATABASE,
    ClusterLayout,
    ClusterState,
)

PACKAGES = ("postgresql", "redis-server")
POSTGRES_OS_USER = "postgres"
START_SECONDS = 60


class ServiceError(RuntimeError):
    """A service did not start or stop; the message says which and where its log is."""


def postgres_bin(name: str) -> Path | None:
    """A PostgreSQL program: Debian keeps them per major version, outside PATH (newest wins)."""
    versions = sorted(
        Path("/usr/lib/postgresql").glob(f"*/bin/{name}"),
        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0,
    )
    found = versions[-1] if versions else shutil.which(name)
    return Path(found) if found else None


def missing_programs() -> list[str]:
    """The programs a cluster needs that this machine lacks, by Debian package."""
    missing = []
    if postgres_bin("pg_ctl") is None or postgres_bin("initdb") is None:
        missing.append("postgresql")
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        missing.append("redis-server")
    return missing


def install_packages() -> None:
    """Installs PostgreSQL and Redis with apt when missing (root only: else say what to run)."""
    missing = missing_programs()
    if not missing:
        return
    if os.geteuid() != 0:
        raise ServiceError(
            f"missing {', '.join(missing)}: run `apt-get install -y {' '.join(PACKAGES)}`"
        )
    install = ["apt-get", "install", "-y", "-qq", *PACKAGES]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(install, env=env, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, check=True)
        subprocess.run(install, env=env, check=True)


def _as_postgres() -> dict[str, Any]:
    """subprocess options running a PostgreSQL program as its own user when we are root."""
    if os.geteuid() != 0:
        return {}
    owner = pwd.getpwnam(POSTGRES_OS_USER)
    return {"user": owner.pw_uid, "group": owner.pw_gid, "extra_groups": [], "cwd": "/"}


def _give_to_postgres(path: Path) -> None:
    if os.geteuid() == 0:
        owner = pwd.getpwnam(POSTGRES_OS_USER)
        os.chown(path, owner.pw_uid, owner.pw_gid)


def _pg(name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    program = postgres_bin(name)
    if program is None:
        raise ServiceError(f"PostgreSQL's {name} is not installed (apt-get install postgresql)")
    return subprocess.run(
        [str(program), *args], capture_output=True, text=True, check=check, **_as_postgres()
    )


def init_postgres(layout: ClusterLayout, state: ClusterState) -> None:
    """A database cluster of our own (once): its superuser logs in with the state's password."""
    data = layout.postgres_data
    if (data / "PG_VERSION").is_file():
        return
    data.mkdir(parents=True, exist_ok=True)
    data.chmod(0o700)
    _give_to_postgres(data)
    password_file = layout.services / ".pgpass-init"
    password_file.touch(mode=0o600)
    password_file.write_text(state.postgres_password + "\n")
    _give_to_postgres(password_file)
    try:
        result = _pg(
            "initdb", "-D", str(data), "-U", DATABASE_USER, f"--pwfile={password_file}",
            "--auth-local=peer", "--auth-host=scram-sha-256", "--encoding=UTF8",
            "--locale=C", check=False,
        )  # fmt: skip
    finally:
        password_file.unlink(missing_ok=True)
    if result.returncode != 0:
        hint = ""
        if "Permission denied" in result.stderr and os.geteuid() == 0:
            hint = f" (the {POSTGRES_OS_USER} user must be able to enter every folder above {data})"
        raise ServiceError(f"initdb failed{hint}:\n{result.stderr.strip()}")


def postgres_running(layout: ClusterLayout) -> bool:
    if not (layout.postgres_data / "postmaster.pid").is_file():
        return False
    return _pg("pg_ctl", "status", "-D", str(layout.postgres_data), check=False).returncode == 0


def start_postgres(layout: ClusterLayout, state: ClusterState) -> None:
    """Starts PostgreSQL on 127.0.0.1 only, then makes the database Dagster uses (once)."""
    init_postgres(layout, state)
    if not postgres_running(layout):
        log = layout.logs / "postgres.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.touch()
        _give_to_postgres(log)
        options = (
            f"-p {state.ports.postgres} -c listen_addresses=127.0.0.1 "
            f"-k {layout.postgres_data}"  # its socket stays in its own folder
        )
        result = _pg(
            "pg_ctl", "start", "-D", str(layout.postgres_data), "-l", str(log), "-w",
            "-t", str(START_SECONDS), "-o", options, check=False,
        )  # fmt: skip
        if result.returncode != 0:
            raise ServiceError(f"PostgreSQL did not start: {result.stdout.strip()}; see {log}")
    _create_database(state)


def _create_database(state: ClusterState) -> None:
    import psycopg2

    with closing(psycopg2.connect(state.libpq_url("postgres"))) as connection:
        connection.autocommit = True  # CREATE DATABASE refuses to run in a transaction
        with connection.cursor() as cursor:
            for name in (DATABASE, LLM_CACHE_DATABASE):
                cursor.execute("select 1 from pg_database where datname = %s", (name,))
                if cursor.fetchone() is None:
                    cursor.execute(f'create database "{name}"')


def stop_postgres(layout: ClusterLayout) -> None:
    """A fast shutdown: open sessions are ended and every committed transaction is kept."""
    if postgres_running(layout):
        _pg("pg_ctl", "stop", "-D", str(layout.postgres_data), "-m", "fast", "-w")


def _redis_cli(state: ClusterState, *args: str) -> subprocess.CompletedProcess[str]:
    command = ["redis-cli", "-h", "127.0.0.1", "-p", str(state.ports.redis), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=10, check=False)


def redis_running(state: ClusterState) -> bool:
    return _redis_cli(state, "ping").stdout.strip() == "PONG"


def start_redis(layout: ClusterLayout, state: ClusterState) -> None:
    """Redis on 127.0.0.1 with an append-only file: queued tasks survive a restart."""
    if redis_running(state):
        return
    layout.redis_dir.mkdir(parents=True, exist_ok=True)
    layout.logs.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "redis-server", "--port", str(state.ports.redis), "--bind", "127.0.0.1",
            "--daemonize", "yes", "--pidfile", str(layout.redis_dir / "redis.pid"),
            "--dir", str(layout.redis_dir), "--logfile", str(layout.logs / "redis.log"),
            "--appendonly", "yes", "--save", "",
        ],
        check=True,
    )  # fmt: skip
    deadline = time.monotonic() + START_SECONDS
    while not redis_running(state):
        if time.monotonic() > deadline:
            raise ServiceError(f"Redis did not answer; see {layout.logs / 'redis.log'}")
        time.sleep(0.1)


def stop_redis(layout: ClusterLayout, state: ClusterState) -> None:
    """Shuts Redis down after writing its append-only file, and waits for its process to end."""
    pid_file = layout.redis_dir / "redis.pid"
    pid = int(pid_file.read_text()) if pid_file.is_file() else None
    if redis_running(state):
        _redis_cli(state, "shutdown")
    deadline = time.monotonic() + START_SECONDS
    while pid is not None and _alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, 9)
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in _state_of(pid)


def _state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"
