"""The cluster profile's parts that need no service: the executor switch, the watch on Celery
workers, the build's ordering, the output comparison, the settings files."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import types
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from bigaction_assets.cluster import compare, executor
from bigaction_assets.cluster.build import dependents, partition_tags, prerequisites
from bigaction_assets.cluster.layout import LOCATION_NAME, ClusterLayout, ClusterState, service_env
from bigaction_assets.cluster.settings import BROKER_ENV, EXECUTOR_ENV
from bigaction_assets.defs import executors
from bigaction_assets.defs.jobs import execution_config
from bigaction_assets.rerun.graph import AssetNode, Graph
from bigaction_assets.rerun.plan import Step
from bigaction_assets.settings import DATA_DIR_ENV, LANDING_DIR_ENV, PROJECT_ROOT

JOBS_EXECUTORS = """
import json
from bigaction_assets.definitions import defs
from bigaction_assets.defs.jobs import execution_config
repository = defs().get_repository_def()
print(json.dumps({job.name: job.executor_def.name for job in repository.get_all_jobs()}))
print(json.dumps(execution_config(10**12)))
"""


def test_the_embedded_default_runs_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    from bigaction_assets.definitions import defs

    repository = defs().get_repository_def()
    assert repository.get_job("build_dataset").executor_def is dg.multi_or_in_process_executor
    assert repository.get_job("publish_release").executor_def is dg.in_process_executor
    assert execution_config(1) == {"execution": {"config": {"in_process": {}}}}


def test_celery_is_chosen_by_the_environment_for_every_job() -> None:
    env = {**os.environ, EXECUTOR_ENV: "celery", BROKER_ENV: "redis://127.0.0.1:9/0"}
    result = subprocess.run(
        [sys.executable, "-c", JOBS_EXECUTORS], env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    executors_by_job, run_config = result.stdout.strip().splitlines()[-2:]
    assert set(json.loads(executors_by_job).values()) == {"celery"}
    assert json.loads(run_config) == {}, "no per-run executor choice: every step is a task"


def test_kubernetes_steps_take_dagster_k8s_executor_or_say_what_the_image_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "k8s")
    monkeypatch.setitem(sys.modules, "dagster_k8s", None)  # as in this lock: not installed
    with pytest.raises(ImportError, match=r"needs dagster-k8s in the image .*0\.29\.27"):
        executors.location_executor()
    fake = types.ModuleType("dagster_k8s")
    fake.k8s_job_executor = dg.ExecutorDefinition(name="k8s", executor_creation_fn=None)
    monkeypatch.setitem(sys.modules, "dagster_k8s", fake)
    assert executors.location_executor() is fake.k8s_job_executor
    assert executors.dataset_executor() is fake.k8s_job_executor
    assert execution_config(1) == {}


def test_an_unknown_executor_or_a_missing_broker_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(EXECUTOR_ENV, "kubernetes")
    with pytest.raises(ValueError, match="BIGACTION_EXECUTOR must be"):
        executors.selected()
    monkeypatch.setenv(EXECUTOR_ENV, "celery")
    monkeypatch.delenv(BROKER_ENV, raising=False)
    with pytest.raises(ValueError, match="needs BIGACTION_CELERY_BROKER"):
        executors.celery_executor()


class FakeResult:
    def __init__(self, state: str, info: object = None, error: Exception | None = None) -> None:
        self.state, self.info, self.error = state, info, error

    def ready(self) -> bool:
        if self.error:
            raise self.error
        return self.state in ("SUCCESS", "FAILURE")

    def get(self) -> list[str]:
        return ["events"]


class FakeControl:
    def __init__(self, answers: list[object]) -> None:
        self.answers, self.pinged = answers, []

    def ping(self, destination: list[str], timeout: float) -> list[dict[str, object]]:
        self.pinged.append(destination[0])
        answer = self.answers.pop(0) if self.answers else []
        if isinstance(answer, Exception):
            raise answer
        return answer


class FakeApp:
    def __init__(self, answers: list[object]) -> None:
        self.control = FakeControl(answers)
        self.conf = type("Conf", (), {"result_backend": "redis://127.0.0.1:6379/0"})


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "WATCH_SECONDS", 0.0)


def watched(result: FakeResult, app: FakeApp) -> executor.WatchedResult:
    return executor.WatchedResult(result, app, "raw_records")


@pytest.mark.usefixtures("no_waiting")
def test_a_step_whose_worker_stops_answering_fails_naming_the_worker() -> None:
    app = FakeApp([])
    result = watched(FakeResult("STARTED", {"hostname": "worker1@vm", "pid": 7}), app)
    assert [result.ready() for _ in range(executor.MISSES)] == [False] * 2 + [True]
    with pytest.raises(executor.WorkerLost, match=r"worker1@vm stopped answering .*raw_records"):
        result.get()
    assert app.control.pinged == ["worker1@vm"] * executor.MISSES


@pytest.mark.usefixtures("no_waiting")
def test_an_answering_worker_or_a_queued_step_is_waited_for() -> None:
    pong = [{"worker1@vm": {"ok": "pong"}}]
    app = FakeApp([[], [], pong, [], []])  # two misses, then an answer: the count starts over
    started = watched(FakeResult("STARTED", {"hostname": "worker1@vm"}), app)
    assert not any(started.ready() for _ in range(5))
    queued_app = FakeApp([])
    queued = watched(FakeResult("PENDING"), queued_app)
    assert not any(queued.ready() for _ in range(5))
    assert queued_app.control.pinged == [], "a task no worker took has no worker to ping"


@pytest.mark.usefixtures("no_waiting")
def test_a_broker_away_is_not_a_dead_worker_but_past_the_retries_it_is_said_so() -> None:
    app = FakeApp([OperationalError("connection refused")] * 5)
    started = watched(FakeResult("STARTED", {"hostname": "worker1@vm"}), app)
    assert not any(started.ready() for _ in range(5)), "no ping answer is no news of the worker"
    gone = watched(FakeResult("STARTED", error=RedisConnectionError("Error 111")), FakeApp([]))
    with pytest.raises(executor.BrokerUnreachable, match=r"redis://127\.0\.0\.1:6379/0.*Error 111"):
        gone.ready()


def node(key: str, deps: tuple[str, ...] = (), partitions: str | None = "datasets") -> AssetNode:
    return AssetNode(key, key, "g", None, partitions, deps, None)


def test_steps_wait_for_what_they_read_and_the_waited_on_go_first() -> None:
    graph = Graph(
        {
            "raw_records": node("raw_records"),
            "episodes": node("episodes", ("raw_records",)),
            "raw_telemetry": node("raw_telemetry", partitions="telemetry_batches"),
            "telemetry_report": node("telemetry_report", ("raw_telemetry",), None),
            "reward_examples": node("reward_examples", ("episodes",), None),
            "hub_release": node("hub_release", ("episodes",), None),
            "unread_landing_files": node("unread_landing_files", partitions=None),
        },
        {},
    )
    steps = [
        Step("ingest_telemetry_batches", ("b1", "b2"), stale=[("raw_telemetry", "b1")]),
        Step("build_dataset", ("adp.a",), stale=[("raw_records", "adp.a"), ("episodes", "adp.a")]),
        Step("build_dataset", ("adp.b",), stale=[("raw_records", "adp.b"), ("episodes", "adp.b")]),
        Step("build_telemetry_day", ("t.1",), stale=[("telemetry_report", None)]),
        Step("list_unread_landing_files", (), stale=[("unread_landing_files", None)]),
        Step("build_reward_examples", (), stale=[("reward_examples", None)]),
        Step("publish_release", (), stale=[("hub_release", None)]),
    ]
    needs = prerequisites(steps, graph)
    # datasets never wait for one another; the release reads the reward sets (EXTRA_DEPS)
    assert needs == [set(), set(), set(), {0}, set(), {1, 2}, {1, 2, 5}]
    assert dependents(needs) == [1, 2, 2, 0, 0, 1, 0]
    # an erasure of forgotten senders (no graph edge) comes before everything else
    erasure = Step("forget_users", (), stale=[("forgotten_users", None)])
    graph.assets["forgotten_users"] = node("forgotten_users", partitions=None)
    needs = prerequisites([erasure, *steps], graph)
    assert needs[0] == set() and all(0 in need for need in needs[1:])
    assert partition_tags(steps[1]) == {"dagster/partition": "adp.a"}
    assert partition_tags(steps[0]) == {
        "dagster/asset_partition_range_start": "b1",
        "dagster/asset_partition_range_end": "b1",
    }


def make_data_dir(root: Path, rows: list[tuple[int, str]]) -> Path:
    for folder in ("lake/raw/raw_records", "sft/openai", "release"):
        (root / folder).mkdir(parents=True)
    (root / "sft/openai/train.jsonl").write_text('{"messages": []}\n')
    (root / "release/README.md").write_text("# card\n")
    with duckdb.connect(str(root / compare.CATALOG)) as con:
        con.execute("create table t as select * from (values " + ", ".join(
            f"({n}, '{text}')" for n, text in rows) + ") v(n, text)")  # fmt: skip
        con.execute("create view episodes as select * from t")
    (root / "lake/raw/raw_records/adp.a.parquet").write_bytes(b"PAR1 rows PAR1")
    return root


def test_two_data_folders_compare_by_file_bytes_and_by_catalog_answers(tmp_path: Path) -> None:
    expected = make_data_dir(tmp_path / "a", [(1, "x"), (2, "y")])
    same = make_data_dir(tmp_path / "b", [(2, "y"), (1, "x")])  # row order is not an answer
    assert compare.differences(expected, same) == []
    (same / "release/README.md").write_text("# another card\n")
    (same / "sft/openai/test.jsonl").write_text("")
    with duckdb.connect(str(same / compare.CATALOG)) as con:
        con.execute("update t set text = 'z' where n = 2")
    assert compare.differences(expected, same) == [
        "file only in the actual folder: sft/openai/test.jsonl",
        "file differs: release/README.md",
        "view differs: episodes",
    ]


def test_cluster_state_keeps_its_password_private_and_its_urls_usable(tmp_path: Path) -> None:
    layout = ClusterLayout(data_dir=tmp_path / "cluster", landing=tmp_path / "landing")
    state = ClusterState.fresh()
    state.save(layout.state_file)
    assert stat.S_IMODE(layout.state_file.stat().st_mode) == 0o600
    assert ClusterState.load(layout.state_file) == state
    # SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3, which is not installed
    assert state.postgres_url.startswith("postgresql+psycopg2://bigaction:")
    env = service_env(layout, state, {"PATH": "/usr/bin", "HF_TOKEN": "kept"})
    assert env["BIGACTION_EXECUTOR"] == "celery" and env["HF_TOKEN"] == "kept"
    assert env["DAGSTER_HOME"] == str(layout.dagster_home)
    assert env["BIGACTION_CELERY_BROKER"] == env["BIGACTION_CELERY_BACKEND"] == state.redis_url
    # one LLM call cache for every worker: its own database beside Dagster's
    assert env["BIGACTION_LLM_CACHE_URL"] == state.libpq_url("llm_cache")


def test_the_cluster_instance_settings_are_valid_and_pool_as_the_default_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster._core.instance.config import dagster_instance_config

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(PROJECT_ROOT / "deploy" / "cluster" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("BIGACTION_POSTGRES_URL", "postgresql+psycopg2://u:p@127.0.0.1:1/d")
    config, _ = dagster_instance_config(str(home))
    assert config["storage"]["custom"]["class"] == "PooledPostgresStorage"  # test_cluster_worker
    assert config["run_launcher"]["class"] == "ForkedRunLauncher"  # test_cluster_launcher
    assert config["run_monitoring"]["enabled"] is True
    embedded = yaml.safe_load((PROJECT_ROOT / "dagster.yaml").read_text())
    assert config["concurrency"]["pools"] == embedded["concurrency"]["pools"]
    # twice the runs at once of the embedded default: two for each of make cluster's workers
    runs = config["concurrency"]["runs"]["max_concurrent_runs"]
    assert runs == 2 * embedded["concurrency"]["runs"]["max_concurrent_runs"] == 4
    assert json.dumps(config["run_queue"]) == json.dumps(embedded["run_queue"])


def test_the_helm_values_load_our_code_location_with_settings_it_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values = yaml.safe_load((PROJECT_ROOT / "deploy" / "k8s" / "values.yaml").read_text())
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    args = deployment["codeServerArgs"]
    module = args[args.index("-m") + 1]
    assert (PROJECT_ROOT / (module.replace(".", "/") + ".py")).is_file()
    assert args[args.index("--location-name") + 1] == LOCATION_NAME
    env = {item["name"]: item["value"] for item in deployment["env"]}
    monkeypatch.setenv(EXECUTOR_ENV, env[EXECUTOR_ENV])
    assert executors.selected() == "k8s"
    assert {DATA_DIR_ENV, LANDING_DIR_ENV} <= env.keys()
    mounted = {mount["mountPath"] for mount in deployment["volumeMounts"]}
    assert {env[DATA_DIR_ENV], env[LANDING_DIR_ENV]} <= mounted, "the data lives on the volume"
    assert values["runLauncher"]["type"] == "K8sRunLauncher"
    assert values["postgresql"]["enabled"] is False and not values["redis"]["enabled"]
