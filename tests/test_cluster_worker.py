"""The cluster's step tasks, without services: what a worker process keeps between tasks (and
every process of the cluster: pooled PostgreSQL connections), and how a run deals the steps that
became ready together over tasks."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.definitions.reconstruct import ReconstructableJob, ReconstructableRepository
from dagster._core.execution.api import create_execution_plan
from sqlalchemy import exc
from sqlalchemy.pool import QueuePool

from bigaction_assets.cluster import pooled_storage, worker
from bigaction_assets.cluster.execution_loop import batches, materializes
from bigaction_assets.settings import DATA_DIR_ENV, PROJECT_ROOT

RUN_CONFIG = {"ops": {"sft_examples": {"config": {"workers": 1}}}}


@pytest.fixture(scope="module")
def build_dataset() -> ReconstructableJob:
    repository = ReconstructableRepository.for_module("bigaction_assets.definitions", "defs")
    return repository.get_reconstructable_job("build_dataset")


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))


def test_a_worker_loads_the_code_location_once_for_every_step_of_every_run(
    build_dataset: ReconstructableJob,
) -> None:
    worker._repository.cache_clear()
    worker._job_definition.cache_clear()
    # what each task receives: the run's job, packed; and what Dagster's own execution asks
    tasks = [worker.LoadedJob(ReconstructableJob.from_dict(build_dataset.to_dict())) for _ in "ab"]
    first = tasks[0].get_definition()
    plan = create_execution_plan(tasks[1], RUN_CONFIG, step_keys_to_execute=["raw_records"])
    assert plan.step_keys_to_execute == ["raw_records"]
    assert tasks[1].get_definition() is first
    assert tasks[1].get_repository_definition() is tasks[0].get_repository_definition()
    assert worker._repository.cache_info().misses == 1, "the definitions were loaded once"
    # a subset (another run's asset selection) is its own job, from the same definitions
    subset = tasks[0].get_subset(asset_selection={dg.AssetKey("raw_records")})
    assert subset.asset_selection == {dg.AssetKey("raw_records")}
    nodes = {node.name for node in subset.get_definition().nodes_in_topological_order}
    assert nodes == {"raw_records", "raw_records_forgotten_users_absent"}  # and its check
    assert worker._repository.cache_info().misses == 1


class DeadCursor:
    def execute(self, statement: str) -> None:
        raise OSError("server closed the connection unexpectedly")

    def close(self) -> None:
        pass


class LiveCursor(DeadCursor):
    def execute(self, statement: str) -> None:
        self.executed = statement


def test_every_cluster_process_holds_its_postgres_connections_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster._core.instance.config import dagster_instance_config
    from dagster._core.storage.base_storage import DagsterStorage
    from dagster._serdes import ConfigurableClassData

    shutil.copy(PROJECT_ROOT / "deploy" / "cluster" / "dagster.yaml", tmp_path / "dagster.yaml")
    monkeypatch.setenv("BIGACTION_POSTGRES_URL", "postgresql+psycopg2://u:p@127.0.0.1:1/d")
    custom = dagster_instance_config(str(tmp_path))[0]["storage"]["custom"]
    # what every process rehydrates from the instance settings (no tables to look for here)
    config = {**custom["config"], "should_autocreate_tables": False}
    data = ConfigurableClassData(custom["module"], custom["class"], yaml.safe_dump(config))
    storage = data.rehydrate(as_type=DagsterStorage)
    for part in (storage.run_storage, storage.event_log_storage, storage.schedule_storage):
        assert isinstance(part._engine.pool, QueuePool), "dagster-postgres's default: NullPool"
        assert part._engine.url.port == 1


def test_a_pooled_connection_postgres_dropped_is_replaced_before_a_step_uses_it() -> None:
    cursor = LiveCursor()
    pooled_storage._ping(type("Connection", (), {"cursor": lambda self: cursor})(), None, None)
    assert cursor.executed == "SELECT 1"
    dead = type("Connection", (), {"cursor": lambda self: DeadCursor()})()
    # DisconnectionError makes SQLAlchemy's pool drop the connection and open another
    with pytest.raises(exc.DisconnectionError, match="closed the connection"):
        pooled_storage._ping(dead, None, None)


def test_materializing_steps_get_a_task_each_and_ready_checks_share_two(
    build_dataset: ReconstructableJob,
) -> None:
    job = build_dataset.get_definition()
    plan = create_execution_plan(job, RUN_CONFIG)
    steps = {step.key: step for step in plan.get_steps_to_execute_in_topo_order()}
    layer = job.asset_layer
    assert {key for key, step in steps.items() if materializes(layer, step)} == {
        "raw_records", "standardize_dataset", "thoughts", "sft_examples", "sft_files",
    }  # fmt: skip
    # what becomes ready once the standardized tables are written: their 12 checks
    done = {"raw_records", "raw_records_forgotten_users_absent", "standardize_dataset"}
    deps = plan.get_all_step_deps()
    ready = [step for key, step in steps.items() if key not in done and deps[key] <= done]
    assert len(ready) == 12 and not any(materializes(layer, step) for step in ready)
    ready.insert(0, steps["thoughts"])  # and a step that materializes, as if ready with them
    tasks = batches(layer, ready, check_batches=2)
    assert [step.key for step in tasks[0]] == ["thoughts"]
    assert sorted(len(task) for task in tasks[1:]) == [6, 6]
    assert sorted(step.key for task in tasks for step in task) == sorted(s.key for s in ready)
    # one check alone is one task; asking for 1 batch puts every check in one task
    assert [len(task) for task in batches(layer, ready[1:2], check_batches=2)] == [1]
    assert [len(task) for task in batches(layer, ready, check_batches=1)] == [1, 12]


def test_checks_bound_for_another_queue_go_in_tasks_of_their_own(
    build_dataset: ReconstructableJob,
) -> None:
    job = build_dataset.get_definition()
    plan = create_execution_plan(job, RUN_CONFIG)
    checks = [s for s in plan.get_steps_to_execute_in_topo_order() if s.key.startswith("events_")]
    tagged = checks[0]._replace(tags={**checks[0].tags, "dagster-celery/queue": "gpu"})
    tasks = batches(job.asset_layer, [tagged, *checks[1:]], check_batches=2)
    assert [tagged] in tasks, "alone: the only check bound for its queue"
    assert len(tasks) == 3
    assert all(len({s.tags.get("dagster-celery/queue") for s in task}) == 1 for task in tasks)
