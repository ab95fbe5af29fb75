"""A whole local cluster for a test: started as `make cluster` starts it, built, stopped.

`python -m bigaction_assets.cluster up` in a temporary folder on free ports, and `... down`
whatever happens, then a look with `ps` that nothing of it is left running. While the demo graph
builds, the fixture holds the `llm` pool's only slot and notes what ran meanwhile.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from cluster_watch import (
    events,
    leftover_processes,
    wait_for,
)

from bigaction_assets.cluster import backing, compare, objectstore
from bigaction_assets.cluster.build import graphql_submitter
from bigaction_assets.cluster.layout import POSTGRES_URL_ENV, ClusterLayout, ClusterState
from bigaction_assets.cluster.store_settings import CLUSTER_LAKE_ENV, lake_mode
from bigaction_assets.lakefs import LakeRoot

REPO = Path(__file__).resolve().parents[1]
REQUIRED = os.environ.get("BIGACTION_REQUIRE_CLUSTER") == "1"
LANDING = ["adp/synatra.json"]  # the telemetry sample is landed by the build itself
HOLDER = "held-by-the-test"  # a run id no run has: the llm slot it holds is freed by no one
TIMEOUT = 600  # seconds; a guard against a hang, not a performance assertion


def services_missing() -> str | None:
    missing = backing.missing_programs()
    if missing:
        return f"{', '.join(missing)} not installed (apt-get install -y postgresql redis-server)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(backing.POSTGRES_OS_USER)
        except KeyError:
            return "no `postgres` user to run PostgreSQL as (root may not)"
    return None


@dataclass
class Cluster:
    layout: ClusterLayout
    state: ClusterState
    env: dict[str, str]
    instance: dg.DagsterInstance
    build: subprocess.CompletedProcess[str]
    differences: list[str]
    held: dict[str, object]
    """What the test saw while it held the llm slot."""
    run_ids: list[str]
    """The runs of the build."""

    @property
    def lake(self) -> Path | LakeRoot:
        """The cluster's lake as its workers see it: a folder, or objects in its S3 server."""
        return objectstore.outputs(self.layout.data_dir).store or self.layout.data_dir / "lake"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return cli(self.env, *args)

    def submit_raw_records(self, partition: str) -> str:
        submit = graphql_submitter(self.state)
        return submit("build_dataset", ["raw_records"], {"dagster/partition": partition}, {})


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "bigaction_assets.cluster", *args]
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def copy_landing(target: Path) -> None:
    for relative in LANDING:
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "landing" / relative, target / relative)


def hold_llm_slot(instance: dg.DagsterInstance, build: subprocess.Popen[str]) -> dict[str, object]:
    """Holds the llm pool's one slot until two runs wait for it, and notes what ran meanwhile."""
    storage = instance.event_log_storage
    wait_for(
        lambda: len(storage.get_concurrency_info("llm").pending_run_ids) >= 2 or build.poll(),
        TIMEOUT,
        "two runs waiting for the llm pool",
    )
    waiting = sorted(storage.get_concurrency_info("llm").pending_run_ids)
    started = [e for run in waiting for e in events(instance, run, "STEP_START")]
    held = {
        "waiting": waiting,
        "thoughts_started_while_held": [e.run_id for e in started if e.step_key == "thoughts"],
        "released_at": time.time(),
    }
    storage.free_concurrency_slot_for_step(HOLDER, "holding")
    return held


@contextmanager
def running_cluster() -> Iterator[Cluster]:
    missing = services_missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"BIGACTION_REQUIRE_CLUSTER=1 but {missing}")
        pytest.skip(missing)
    root = Path(tempfile.mkdtemp(prefix="bigaction-cluster-"))
    root.chmod(0o755)  # PostgreSQL runs as its own user and must reach its folder
    env = {
        name: value for name, value in os.environ.items()
        if not name.startswith("BIGACTION_") and name not in ("DAGSTER_HOME", "OPENAI_API_KEY")
    }  # fmt: skip
    copy_landing(root / "landing")
    copy_landing(root / "reference-landing")
    reference_env = {
        **env,
        "BIGACTION_DATA_DIR": str(root / "reference"),
        "BIGACTION_LANDING_DIR": str(root / "reference-landing"),
    }
    env |= {
        "BIGACTION_CLUSTER_DIR": str(root / "cluster"),
        "BIGACTION_LANDING_DIR": str(root / "landing"),
        CLUSTER_LAKE_ENV: lake_mode(),  # the lake `make cluster` keeps, unless this run asks
    }
    layout = ClusterLayout(data_dir=root / "cluster", landing=root / "landing")
    # `make demo` on the same landing data, beside the cluster's start-up
    reference = subprocess.Popen(
        [sys.executable, "-m", "bigaction_assets.demo"],
        env=reference_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        started = cli(env, "up", "--no-build")
        assert started.returncode == 0, started.stdout + started.stderr
        state = ClusterState.load(layout.state_file)
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(POSTGRES_URL_ENV, state.postgres_url)
            instance = dg.DagsterInstance.from_config(str(layout.dagster_home))
            instance.event_log_storage.set_concurrency_slots("llm", 1)
            instance.event_log_storage.claim_concurrency_slot("llm", HOLDER, "holding")
            log = root / "build.log"
            with open(log, "w") as out:
                build = subprocess.Popen(
                    [sys.executable, "-m", "bigaction_assets.cluster", "up"],
                    env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                )  # fmt: skip
                held = hold_llm_slot(instance, build)
                build.wait(timeout=TIMEOUT)
            built = subprocess.CompletedProcess(build.args, build.returncode, log.read_text(), "")
            demo_out, _ = reference.communicate(timeout=TIMEOUT)
            assert reference.returncode == 0, demo_out
            # the cluster's outputs as `compare` reads them: from its S3 server with an s3 lake
            actual = objectstore.outputs(layout.data_dir)
            differences = compare.differences(root / "reference", actual)
            run_ids = [run.run_id for run in instance.get_runs()]
            yield Cluster(layout, state, env, instance, built, differences, held, run_ids)
    finally:
        reference.kill()
        reference.wait()
        stopped = cli(env, "down")
        leftovers = leftover_processes(layout)
        for line in leftovers:  # never leave a service of a failed test running
            os.kill(int(line.split()[0]), signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert not leftovers, f"processes left after `cluster down`: {leftovers}"
