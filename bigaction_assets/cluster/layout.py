"""Where a local cluster keeps its state, its ports and its processes' environment."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from bigaction_assets.cluster.settings import BACKEND_ENV, BROKER_ENV, CELERY, EXECUTOR_ENV
from bigaction_assets.cluster.store_settings import DEFAULT_LAKE, LOCAL, S3, store_env
from bigaction_assets.settings import (
    DATA_DIR_ENV,
    LANDING_DIR_ENV,
    LLM_CACHE_URL_ENV,
    PROJECT_ROOT,
    Paths,
)

CLUSTER_DIR_ENV = "BIGACTION_CLUSTER_DIR"
POSTGRES_URL_ENV = "BIGACTION_POSTGRES_URL"
INSTANCE_SETTINGS = PROJECT_ROOT / "deploy" / "cluster" / "dagster.yaml"
LOCATION_NAME = "bigaction"
DATABASE = "dagster"
LLM_CACHE_DATABASE = "llm_cache"
"""The LLM call cache every worker shares (llm/cache_postgres.py), beside Dagster's own."""
DATABASE_USER = "bigaction"
WORKERS = 2


# Where the kernel takes the ports of outgoing connections and of servers that bind port 0
# (Linux's own default where /proc says nothing), and the ports below it the cluster picks from.
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
DEFAULT_EPHEMERAL = (32768, 60999)
LOWEST_PORT = 10000


def ephemeral_range() -> tuple[int, int]:
    """The ports this machine hands out of its own accord (ip_local_port_range)."""
    try:
        low, high = (int(part) for part in EPHEMERAL_RANGE_FILE.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL
    return low, high


def cluster_port_range() -> range:
    """The ports the cluster picks from: those below the ephemeral range (none if it starts
    too low for that, and then the kernel picks)."""
    low, _ = ephemeral_range()
    return range(LOWEST_PORT, low)


def free_port() -> int:
    """A TCP port nothing listens on now (other engineers' servers share this machine)."""
    return free_ports(1)[0]


def free_ports(count: int, candidates: range | None = None) -> list[int]:
    """`count` different TCP ports nothing listens on now, picked at random among `candidates`
    (`cluster_port_range()`: below the ephemeral range, where no outgoing connection and no
    server of port 0 is given one, as happened while the cluster's servers were starting).
    Each is held until all are found, or one port could be handed out twice. Free now is still
    not free later: a program that binds a port of its choice may take one meanwhile
    (`control.up` moves its Dagster servers when that happens)."""
    pool = cluster_port_range() if candidates is None else candidates
    rng = secrets.SystemRandom()
    order = rng.sample(pool, len(pool)) if len(pool) >= count else []
    with contextlib.ExitStack() as held:
        ports: list[int] = []
        for port in order:
            sock = held.enter_context(socket.socket())
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            ports.append(port)
            if len(ports) == count:
                return ports
        if candidates is not None:
            raise OSError(f"fewer than {count} free ports in {pool}")
        for _ in range(count - len(ports)):  # a machine whose ephemeral range starts low
            sock = held.enter_context(socket.socket())
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
        return ports


@dataclass(frozen=True)
class Ports:
    postgres: int
    redis: int
    code_server: int
    webserver: int
    s3: int

    @classmethod
    def free(cls) -> Ports:
        return cls(*free_ports(5))


@dataclass(frozen=True)
class ClusterState:
    """What a started cluster must remember: its ports, its database password, and where its
    lake is (`local` or `s3`, store_settings.py)."""

    ports: Ports
    postgres_password: str
    lake: str = DEFAULT_LAKE

    @classmethod
    def fresh(cls, lake: str = DEFAULT_LAKE) -> ClusterState:
        return cls(Ports.free(), secrets.token_urlsafe(18), lake)

    def libpq_url(self, database: str = DATABASE) -> str:
        return (
            f"postgresql://{DATABASE_USER}:{self.postgres_password}"
            f"@127.0.0.1:{self.ports.postgres}/{database}"
        )

    @property
    def postgres_url(self) -> str:
        """For dagster-postgres: SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3, which
        it does not install; it ships psycopg2."""
        return self.libpq_url().replace("postgresql://", "postgresql+psycopg2://", 1)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports.redis}/0"

    @property
    def webserver_url(self) -> str:
        return f"http://127.0.0.1:{self.ports.webserver}"

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)  # the password is in it
        path.write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, path: Path) -> ClusterState | None:
        if not path.is_file():
            return None
        raw = json.loads(path.read_text())
        # a state file from before the S3 server: its cluster had a local lake and no such port
        ports = {"s3": free_port(), **raw["ports"]}
        return cls(Ports(**ports), raw["postgres_password"], raw.get("lake", LOCAL))


@dataclass(frozen=True)
class ClusterLayout:
    """A cluster's folders: the factory's data (lake, SFT files, release, Dagster home) in
    `data_dir` as under `make demo`, and the services' own files in `data_dir/services`."""

    data_dir: Path
    landing: Path

    @classmethod
    def from_env(cls) -> ClusterLayout:
        """`BIGACTION_CLUSTER_DIR`, else `cluster/` in the data folder `make demo` uses."""
        paths = Paths.from_env()
        default = paths.lake.parent / "cluster"
        data_dir = Path(os.environ.get(CLUSTER_DIR_ENV) or default).resolve()
        return cls(data_dir=data_dir, landing=paths.landing)

    @property
    def services(self) -> Path:
        return self.data_dir / "services"

    @property
    def postgres_data(self) -> Path:
        return self.services / "postgres"

    @property
    def redis_dir(self) -> Path:
        return self.services / "redis"

    @property
    def logs(self) -> Path:
        return self.services / "logs"

    @property
    def pids(self) -> Path:
        return self.services / "pids"

    @property
    def state_file(self) -> Path:
        return self.services / "cluster.json"

    @property
    def s3_snapshot(self) -> Path:
        """The S3 server's bucket as files, saved when it stops and loaded when it starts
        (moto's server keeps its objects in memory)."""
        return self.services / "s3"

    @property
    def workspace(self) -> Path:
        return self.services / "workspace.yaml"

    @property
    def celery_config(self) -> Path:
        return self.services / "celery.yaml"

    @property
    def dagster_home(self) -> Path:
        return self.data_dir / "dagster"

    def paths(self) -> Paths:
        return Paths(
            landing=self.landing,
            lake=self.data_dir / "lake",
            catalog=self.data_dir / "bigaction.duckdb",
        )


def service_env(
    layout: ClusterLayout, state: ClusterState, base: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment of every Dagster process and worker of the cluster: `base` (the caller's
    own, so model and Hub settings reach the workers) with the cluster profile on top."""
    env = dict(os.environ if base is None else base)
    bin_dir = str(Path(sys.executable).parent)  # `celery` and `dagster` of this environment
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    env.update(
        {
            "DAGSTER_HOME": str(layout.dagster_home),
            DATA_DIR_ENV: str(layout.data_dir),
            LANDING_DIR_ENV: str(layout.landing),
            EXECUTOR_ENV: CELERY,
            BROKER_ENV: state.redis_url,
            BACKEND_ENV: state.redis_url,
            POSTGRES_URL_ENV: state.postgres_url,
            LLM_CACHE_URL_ENV: state.libpq_url(LLM_CACHE_DATABASE),
        }
    )
    if state.lake == S3:  # the lake, SFT files, release, benchmark and reward files in the store
        env.update(store_env(state.ports.s3))
    return env
