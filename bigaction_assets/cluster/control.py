"""Starting and stopping a whole local cluster, each service once it can be used."""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
import urllib.request
from collections.abc import Callable

import yaml

from bigaction_assets.cluster import backing, graphql, objectstore, processes
from bigaction_assets.cluster.layout import (
    INSTANCE_SETTINGS,
    LOCATION_NAME,
    ClusterLayout,
    ClusterState,
    free_ports,
    service_env,
)
from bigaction_assets.cluster.settings import BACKEND_ENV, BROKER_ENV, CELERY_SETTINGS
from bigaction_assets.cluster.store_settings import S3, endpoint, lake_mode, lake_uri
from bigaction_assets.rerun.stamps import STAMPS_FILE

READY_SECONDS = 180  # the code location loads in ~10 s here; more on a busy machine


def wait_until(
    condition: Callable[[], object], what: str, layout: ClusterLayout, names: list[str]
) -> None:
    """Polls `condition` until it holds; fails at once when one of the named processes died."""
    deadline = time.monotonic() + READY_SECONDS
    while not condition():
        for name in names:
            pid = processes.pid_of(layout, name)
            if pid is None or not processes.group_alive(pid):
                log = layout.logs / f"{name}.log"
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
                raise backing.ServiceError(
                    f"{name} stopped before {what} was ready ({log}):\n{tail}"
                )
        if time.monotonic() > deadline:
            raise backing.ServiceError(
                f"{what} not ready within {READY_SECONDS} s; see {layout.logs}"
            )
        time.sleep(0.5)


def write_settings(layout: ClusterLayout, state: ClusterState) -> None:
    """The instance settings (kept when edited), the workspace and the workers' Celery config."""
    layout.dagster_home.mkdir(parents=True, exist_ok=True)
    settings = layout.dagster_home / "dagster.yaml"
    if not settings.exists():
        shutil.copy(INSTANCE_SETTINGS, settings)
    workspace = {
        "load_from": [
            {
                "grpc_server": {
                    "host": "127.0.0.1",
                    "port": state.ports.code_server,
                    "location_name": LOCATION_NAME,
                }
            }
        ]
    }
    layout.services.mkdir(parents=True, exist_ok=True)
    layout.workspace.write_text(yaml.safe_dump(workspace))
    # the workers take the same broker and settings as the executor in the runs
    celery = {
        "broker": {"env": BROKER_ENV},
        "backend": {"env": BACKEND_ENV},
        "config_source": CELERY_SETTINGS,
    }
    layout.celery_config.write_text(yaml.safe_dump({"execution": {"config": celery}}))


def _serving(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/server_info", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def workers_answering(state: ClusterState, names: list[str]) -> bool:
    """Whether every named Celery worker answers a ping through the broker."""
    from celery import Celery

    app = Celery("dagster", broker=state.redis_url, backend=state.redis_url)
    try:
        replies = app.control.ping(timeout=1.0)
    finally:
        app.close()
    answered = {name.split("@", 1)[0] for reply in replies for name in reply}
    return set(names) <= answered


SERVING = ("code-server", "webserver")
# how a server that found its port taken says so: uvicorn (the webserver) and Python, and
# Dagster's gRPC code server
PORT_TAKEN = ("address already in use", "couldnotbindgrpcservertoaddress")
PORT_ATTEMPTS = 3


def _log_size(layout: ClusterLayout, name: str) -> int:
    log = layout.logs / f"{name}.log"
    return log.stat().st_size if log.is_file() else 0


def _found_port_taken(layout: ClusterLayout, since: dict[str, int]) -> str | None:
    """The server whose log says, since the offsets `since`, that its port was taken."""
    for name, offset in since.items():
        with open(layout.logs / f"{name}.log", "rb") as log:
            log.seek(offset)
            written = log.read().decode(errors="replace").lower()
        if any(words in written for words in PORT_TAKEN):
            return name
    return None


def _serve(
    layout: ClusterLayout, state: ClusterState, env: dict[str, str], workers: list[str]
) -> ClusterState:
    """Starts the code server, the webserver and the workers (who load their code beside the
    code server), and waits for the webserver. Their ports were free when the cluster picked
    them, but anything on the machine that binds a port of its own meanwhile may take one: when
    a server stops on a port taken, both servers move to new ports (saved, and written into the
    workspace) and start again. Returns the state with the ports they serve on."""
    attempt = 1
    while True:
        since = {name: _log_size(layout, name) for name in SERVING}
        started = processes.commands(layout, state)
        for name in (*SERVING, *workers):  # a process still running is left as it is
            processes.start(layout, name, started[name], env)
        url = state.webserver_url
        try:
            wait_until(lambda url=url: _serving(url), "Dagster's webserver", layout, list(SERVING))
            return state
        except backing.ServiceError:
            taken = _found_port_taken(layout, since)
            if taken is None or attempt == PORT_ATTEMPTS:
                raise
        print(f"  the {taken}'s port was taken meanwhile: code server and webserver move")
        processes.stop(layout, list(SERVING))
        code_server, webserver = free_ports(2)
        ports = dataclasses.replace(state.ports, code_server=code_server, webserver=webserver)
        state = dataclasses.replace(state, ports=ports)
        state.save(layout.state_file)
        write_settings(layout, state)
        attempt += 1


def up(layout: ClusterLayout, base_env: dict[str, str] | None = None) -> ClusterState:
    """Starts what is not running yet, in order, and returns the cluster's ports."""
    backing.install_packages()
    mode = lake_mode(os.environ if base_env is None else base_env)
    state = ClusterState.load(layout.state_file) or ClusterState.fresh(mode)
    if state.lake != mode:
        # the stamps name the other lake's outputs: every output is built again in this one
        state = dataclasses.replace(state, lake=mode)
        (layout.data_dir / STAMPS_FILE).unlink(missing_ok=True)
    state.save(layout.state_file)
    write_settings(layout, state)
    backing.start_postgres(layout, state)
    backing.start_redis(layout, state)
    if state.lake == S3:
        objectstore.start_s3(layout, state)
    env = service_env(layout, state, base_env)
    processes.create_dagster_tables(layout, env)  # once, before the services race to
    workers = processes.worker_names()
    state = _serve(layout, state, env, workers)
    started = processes.commands(layout, state)
    url = state.webserver_url
    serving = list(SERVING)
    wait_until(lambda: graphql.location_loaded(url), "the code location", layout, serving)
    # before the daemon starts: its sensors would start runs of their own beside ours
    graphql.pause_automation(url)
    processes.start(layout, "daemon", started["daemon"], env)
    everything = [*serving, "daemon", *workers]
    wait_until(lambda: graphql.daemons_healthy(url), "Dagster's daemon", layout, everything)
    wait_until(lambda: workers_answering(state, workers), "the workers", layout, everything)
    return state


def down(layout: ClusterLayout) -> None:
    """Stops every process of the cluster (those that submit work first), then the S3 server
    (its bucket saved), Redis and PostgreSQL; the data stays for the next `up`."""
    state = ClusterState.load(layout.state_file)
    recorded = sorted(path.stem for path in layout.pids.glob("*.pid"))
    services = ("webserver", "daemon", "code-server", objectstore.SERVICE)
    workers = [name for name in recorded if name not in services]
    processes.stop(layout, ["webserver", "daemon", *workers])  # nothing new is submitted
    processes.stop(layout, ["code-server"])  # then the runs it launched
    try:
        objectstore.stop_s3(layout, state)  # nothing writes to it any more: a whole copy
    finally:
        if state is not None:
            backing.stop_redis(layout, state)
        backing.stop_postgres(layout)


def listening(state: ClusterState) -> list[str]:
    """Where each service listens, for a person to read."""
    ports = state.ports
    return [
        f"  Dagster UI:        {state.webserver_url}",
        f"  PostgreSQL:        127.0.0.1:{ports.postgres} (database dagster, user bigaction)",
        f"  Redis (broker):    {state.redis_url}",
        f"  code server:       127.0.0.1:{ports.code_server} (gRPC, location {LOCATION_NAME})",
        f"  Celery workers:    {', '.join(processes.worker_names())} (one task at a time each)",
    ] + (
        [f"  S3 server (moto):  {endpoint(ports.s3)} (lake {lake_uri()}, bucket saved on down)"]
        if state.lake == S3
        else []
    )
