"""The code location itself: it loads, and its asset graph matches the committed snapshot."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

import bigaction_assets.defs as defs_package
from bigaction_assets.definitions import defs
from bigaction_assets.settings import PROJECT_ROOT

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.json"
UPDATE_ENV = "UPDATE_SNAPSHOTS"
STAGES = (
    "landing", "raw", "standardized", "thoughts", "sft", "benchmark", "release", "telemetry",
    "privacy", "reward",
)  # fmt: skip


@pytest.fixture(scope="module")
def definitions() -> dg.Definitions:
    return defs()


def _key(key: dg.AssetKey) -> str:
    return key.to_user_string()


def _partitions_name(partitions_def: dg.PartitionsDefinition | None) -> str | None:
    if partitions_def is None:
        return None
    return getattr(partitions_def, "name", None) or type(partitions_def).__name__


def graph_snapshot(definitions: dg.Definitions) -> dict[str, Any]:
    """What a refactor must not change silently: assets, their wiring, checks, jobs, sensors."""
    graph = definitions.resolve_asset_graph()
    assets = {}
    for key in sorted(graph.get_all_asset_keys(), key=_key):
        node = graph.get(key)
        assets[_key(key)] = {
            "group": node.group_name,
            "deps": sorted(_key(parent) for parent in node.parent_keys),
            "kinds": sorted(node.kinds),
            "partitions": _partitions_name(node.partitions_def),
            "has_description": bool(node.description),
            # what runs by itself under `make ui` (none for the Hub push)
            "automation": (
                node.automation_condition.get_label() if node.automation_condition else None
            ),
        }
    checks = [
        {
            "asset": _key(check_key.asset_key),
            "name": check_key.name,
            "blocking": graph.get_check_spec(check_key).blocking,
        }
        for check_key in sorted(graph.asset_check_keys, key=lambda k: (_key(k.asset_key), k.name))
    ]
    repository = definitions.get_repository_def()
    return {
        "assets": assets,
        "asset_checks": checks,
        # `__ASSET_JOB` and friends are Dagster's implicit jobs, not part of our graph
        "jobs": sorted(
            job.name for job in repository.get_all_jobs() if not job.name.startswith("__")
        ),
        "sensors": sorted(sensor.name for sensor in repository.sensor_defs),
    }


def _serialize(snapshot: dict[str, Any]) -> str:
    return json.dumps(snapshot, indent=2, sort_keys=True) + "\n"


def test_definitions_load(definitions: dg.Definitions) -> None:
    dg.Definitions.validate_loadable(definitions)
    assert definitions.resolve_job_def("build_dataset").partitions_def is not None
    sensor = definitions.resolve_sensor_def("landing_datasets_sensor")
    assert {job.name for job in sensor.jobs} == {"build_dataset", "list_unread_landing_files"}


def test_asset_graph_matches_snapshot(definitions: dg.Definitions) -> None:
    current = _serialize(graph_snapshot(definitions))
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert SNAPSHOT.exists(), (
        f"no snapshot at {SNAPSHOT}; create it with "
        f"`{UPDATE_ENV}=1 .venv/bin/pytest tests/test_definitions.py`"
    )
    committed = SNAPSHOT.read_text(encoding="utf-8")
    assert current == committed, (
        f"the asset graph differs from {SNAPSHOT.name}. If the change is intended, regenerate "
        f"it with `{UPDATE_ENV}=1 .venv/bin/pytest tests/test_definitions.py` and commit it.\n"
        f"current graph:\n{current}"
    )


def test_snapshot_is_deterministic(definitions: dg.Definitions) -> None:
    assert _serialize(graph_snapshot(definitions)) == _serialize(graph_snapshot(defs()))


def _asset_keys_defined_in(stage: str) -> set[dg.AssetKey]:
    """Asset keys of every asset defined in a module of `defs/<stage>/`."""
    package = importlib.import_module(f"{defs_package.__name__}.{stage}")
    keys: set[dg.AssetKey] = set()
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, dg.AssetChecksDefinition):
                continue
            if isinstance(value, dg.AssetsDefinition):
                keys |= set(value.keys)
            elif isinstance(value, dg.AssetSpec):
                keys.add(value.key)
    return keys


def test_every_asset_has_a_description_and_its_stage_as_group(
    definitions: dg.Definitions,
) -> None:
    graph = definitions.resolve_asset_graph()
    by_stage = {stage: _asset_keys_defined_in(stage) for stage in STAGES}
    assert set(graph.get_all_asset_keys()) == set().union(*by_stage.values()), (
        f"every asset lives in one of the stage folders {STAGES}"
    )
    for stage, keys in by_stage.items():
        assert keys, f"defs/{stage}/ defines no asset"
        for key in keys:
            node = graph.get(key)
            assert (node.description or "").strip(), f"{_key(key)} has no description"
            assert node.group_name == stage, (
                f"{_key(key)} is defined in defs/{stage}/ but is in group {node.group_name!r}"
            )


def test_the_workspace_make_ui_serves_loads_under_its_own_name(tmp_path) -> None:
    """`make ui` serves `workspace.yaml`; Dagster loads it as the webserver would, and the
    project's name agrees with the workspace's whatever the folder is called."""
    dagster = Path(sys.executable).parent / "dagster"
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    (tmp_path / "dagster.yaml").write_text((PROJECT_ROOT / "dagster.yaml").read_text())
    done = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", str(PROJECT_ROOT / "workspace.yaml")],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Validation successful for code location bigaction" in output
    assert "does not match" not in output


def test_no_asset_has_telemetry_days_it_is_never_built_for(definitions: dg.Definitions) -> None:
    """A telemetry day is a partition of `datasets` built by `build_telemetry_day`: an asset
    partitioned by `datasets` that this job leaves out would show every day as missing in the
    UI forever (the benchmark did). Every landing dataset's job builds the rest."""
    graph = definitions.resolve_asset_graph()
    day_job = set(
        definitions.resolve_job_def("build_telemetry_day").asset_layer.selected_asset_keys
    )
    by_days = {
        _key(key)
        for key in graph.get_all_asset_keys()
        if _partitions_name(graph.get(key).partitions_def) == "datasets"
    }
    assert by_days == {_key(key) for key in day_job if graph.get(key).partitions_def}
    benchmark = ("benchmark_snapshot", "model_answers", "eval_results")
    for name in benchmark:
        assert _partitions_name(graph.get(dg.AssetKey(name)).partitions_def) == "benchmark_datasets"


def test_automation_is_on_and_never_pushes(definitions: dg.Definitions) -> None:
    """Under `make ui` the daemon runs the automation sensor from the start; it reaches the
    SFT files, the leaderboard and the release folder, but the Hub push only runs when
    launched (`publish_release`)."""
    sensor = definitions.resolve_sensor_def("automation_sensor")
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = definitions.resolve_asset_graph()
    automated = {_key(k) for k in graph.get_all_asset_keys() if graph.get(k).automation_condition}
    assert {"sft_files", "leaderboard", "hub_release", "benchmark_snapshot"} <= automated
    assert "hub_revision" not in automated
    assert set(sensor.asset_selection.resolve(graph)) == set(graph.get_all_asset_keys())


LOAD_AND_LIST_MODULES = """
import sys
from bigaction_assets.definitions import defs
defs().get_repository_def().get_job("build_dataset")
print(" ".join(sorted(sys.modules)))
"""


def test_loading_the_code_location_imports_no_model_or_hub_client() -> None:
    """Every run's process, worker, code server and `make demo` loads the code location: a
    client that only a step calling a model uses is imported by that step (~0.7 s of CPU a
    process otherwise; llm/client.py), and the Hub's by the push (defs/hub_resource.py)."""
    done = subprocess.run(
        [sys.executable, "-c", LOAD_AND_LIST_MODULES],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    loaded = set(done.stdout.split())
    assert "bigaction_assets.defs.thoughts.assets" in loaded, "the code location was loaded"
    assert not {"openai", "aiohttp", "huggingface_hub"} & loaded
