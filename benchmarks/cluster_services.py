"""The cluster benchmark's services: an S3 server that counts its bytes, and a local cluster.

The S3 server is moto's, wrapped in a WSGI layer that adds up request bodies (PUT and POST:
uploads and multipart parts) and response bodies of GETs, so the bytes are what crossed the
wire, whoever sent them. The cluster is `python -m bigaction_assets.cluster up --no-build`
with the lake pointed at that server; runs go to its webserver as `make cluster`'s do.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import yaml
from cluster_cpu import CpuMeter
from moto.server import create_backend_app
from werkzeug.serving import make_server

from bigaction_assets.cluster.store_settings import LOCAL_SERVER_CLIENT_ENV

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench"}
REGION = "us-east-1"
BUCKET = "bench"
RUN_TIMEOUT = 3600  # seconds; a guard against a hang


@dataclass
class Traffic:
    """Bytes and requests the S3 server saw, by HTTP method."""

    written: int = 0
    read: int = 0
    requests: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.written, self.read, self.requests = 0, 0, Counter()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"written": self.written, "read": self.read, "requests": dict(self.requests)}


class CountingInput:
    """A request body stream that adds every byte read from it to `traffic.written`."""

    def __init__(self, stream: Any, traffic: Traffic) -> None:
        self.stream, self.traffic = stream, traffic

    def _add(self, data: bytes) -> bytes:
        with self.traffic.lock:
            self.traffic.written += len(data)
        return data

    def read(self, *args: Any) -> bytes:
        return self._add(self.stream.read(*args))

    def readline(self, *args: Any) -> bytes:
        return self._add(self.stream.readline(*args))

    def __iter__(self) -> Iterator[bytes]:
        for line in self.stream:
            yield self._add(line)


class CountingApp:
    """moto's WSGI app, counting the body bytes of every upload and every GET answer."""

    def __init__(self, app: Callable[..., Iterable[bytes]], traffic: Traffic) -> None:
        self.app, self.traffic = app, traffic

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        method = environ["REQUEST_METHOD"]
        with self.traffic.lock:
            self.traffic.requests[method] += 1
        # uploads may come chunked, without a Content-Length: count what is read of the body
        environ["wsgi.input"] = CountingInput(environ["wsgi.input"], self.traffic)
        body = self.app(environ, start_response)
        return self._counted(body) if method == "GET" else body

    def _counted(self, body: Iterable[bytes]) -> Iterator[bytes]:
        try:
            for chunk in body:
                with self.traffic.lock:
                    self.traffic.read += len(chunk)
                yield chunk
        finally:
            close = getattr(body, "close", None)
            if close is not None:
                close()


class CountingS3Server:
    """moto's S3 server on 127.0.0.1 in a thread of this process, with one bucket."""

    def __init__(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
        self.traffic = Traffic()
        app = CountingApp(create_backend_app("s3"), self.traffic)  # S3 alone, as s3_serve
        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.endpoint = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> CountingS3Server:
        self.thread.start()
        self.client().create_bucket(Bucket=BUCKET)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.thread.join()

    def client(self) -> Any:
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION, **{
            "aws_access_key_id": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        })  # fmt: skip

    def env(self, prefix: str) -> dict[str, str]:
        """What points a process's lake at `s3://bench/<prefix>`."""
        return {
            **CREDENTIALS,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": REGION,
            "BIGACTION_LAKE_URI": f"s3://{BUCKET}/{prefix}",
            **LOCAL_SERVER_CLIENT_ENV,  # as the cluster's own S3 server is reached
        }

    def stored_bytes(self) -> int:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
        return sum(item["Size"] for page in pages for item in page.get("Contents", []))

    def empty(self) -> None:
        """Deletes every object: the next build writes everything again."""
        client = self.client()
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})


class LocalCluster:
    """`cluster up --no-build` in `root` with `env`; runs submitted and waited for; `down`."""

    def __init__(
        self, root: Path, landing: Path, env: dict[str, str], max_runs: int | None = None
    ) -> None:
        self.env = {
            **env,
            "BIGACTION_CLUSTER_DIR": str(root),
            "BIGACTION_LANDING_DIR": str(landing),
            # the lake `env` names (this module's counting server), not the cluster's own store
            "BIGACTION_CLUSTER_LAKE": "local",
        }
        self.root = root
        self.max_runs = max_runs
        self.last_cpu: dict[str, float] = {}
        """CPU seconds of each service during the last `build` (cluster_cpu.py)."""

    def cli(self, *args: str) -> None:
        command = [sys.executable, "-m", "bigaction_assets.cluster", *args]
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"cluster {' '.join(args)} failed:\n{done.stdout}{done.stderr}")

    def __enter__(self) -> LocalCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # PostgreSQL runs as its own user and must reach its folder
        if self.max_runs is not None:
            self.limit_runs(self.max_runs)
        self.cli("up", "--no-build")
        os.environ.update(self.env)  # this process reads the cluster's instance too
        import dagster as dg

        from bigaction_assets.cluster.build import graphql_submitter
        from bigaction_assets.cluster.layout import POSTGRES_URL_ENV, ClusterLayout, ClusterState

        self.layout = ClusterLayout(
            data_dir=self.root, landing=Path(self.env["BIGACTION_LANDING_DIR"])
        )
        state = ClusterState.load(self.layout.state_file)
        assert state is not None
        self.state = state
        os.environ[POSTGRES_URL_ENV] = state.postgres_url
        self.instance = dg.DagsterInstance.from_config(str(self.layout.dagster_home))
        self.instance.optimize_for_webserver(statement_timeout=0, pool_recycle=600, max_overflow=2)
        self.submit = graphql_submitter(state)
        return self

    def __exit__(self, *_: object) -> None:
        self.cli("down")

    def limit_runs(self, max_runs: int) -> None:
        """The profile's instance settings with another run queue limit (`cluster up` keeps an
        edited dagster.yaml)."""
        from bigaction_assets.cluster.layout import INSTANCE_SETTINGS

        settings = yaml.safe_load(INSTANCE_SETTINGS.read_text())
        settings["concurrency"]["runs"]["max_concurrent_runs"] = max_runs
        home = self.root / "dagster"
        home.mkdir(parents=True, exist_ok=True)
        (home / "dagster.yaml").write_text(yaml.safe_dump(settings))

    def stop_worker(self, name: str) -> None:
        from bigaction_assets.cluster import processes

        processes.stop(self.layout, [name])

    def build(self, partitions: list[str], assets: list[str], config: dict[str, Any]) -> float:
        """Submits a run per partition at once; the wall seconds until the last one ended."""
        import dagster as dg
        from dagster._core.storage.dagster_run import FINISHED_STATUSES, RunsFilter

        self.instance.add_dynamic_partitions("datasets", partitions)
        meter = CpuMeter(self.layout, self.state.libpq_url("postgres"))
        meter.start()
        started = time.perf_counter()
        runs = [
            self.submit("build_dataset", assets, {"dagster/partition": key}, config)
            for key in partitions
        ]
        deadline = time.monotonic() + RUN_TIMEOUT
        while True:
            # one query a look, on a held connection: a query per run, each on a new connection
            # (PostgreSQL forks a backend for each), cost the server more CPU than the runs' own
            # bookkeeping (16 connections a second for 8 runs)
            found = {
                run.run_id: run.status for run in self.instance.get_runs(RunsFilter(run_ids=runs))
            }
            statuses = [found[run] for run in runs]
            if all(status in FINISHED_STATUSES for status in statuses):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"runs not finished within {RUN_TIMEOUT} s: {statuses}")
            time.sleep(0.5)
        elapsed = time.perf_counter() - started
        self.last_cpu = meter.stop()
        failed = [
            run for run, s in zip(runs, statuses, strict=True) if s != dg.DagsterRunStatus.SUCCESS
        ]
        if failed:
            raise RuntimeError(f"runs failed: {failed} (see the UI or {self.layout.logs})")
        return elapsed
