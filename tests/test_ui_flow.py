"""`make ui` as a user meets it: start it, drop a file into landing, and wait for the SFT files.

The UI (`python -m bigaction_assets.ui`: `dagster dev`, its daemon and code server) runs on a
temporary landing folder, data folder and Dagster home, with a Hub configured (a fake one on
127.0.0.1, through huggingface_hub's own `HF_ENDPOINT`): the new dataset must reach the SFT
files and the local release folder with nobody launching anything, and the Hub must hear
nothing, since a push is only ever launched by a person.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg
import pytest

from bigaction_assets.ui_process import (
    LANDING_SENSOR,
    drop_file,
    running_ui,
    runs_since,
    sensor_ticks,
    wait_for,
)
from tests.conftest import BUNDLED_LANDING
from tests.hub_server import FakeHub

pytestmark = pytest.mark.e2e

MARKER = "flow-marker-7f3a"
TOKEN = "hf_ui_flow_token_0123456789"
# guards against a hang, not performance figures (those are in benchmarks/ui_flow.py)
START_TIMEOUT, FLOW_TIMEOUT = 120, 90
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def two_records() -> bytes:
    """Two records of the bundled synatra sample, renamed and carrying a marker."""
    records = json.loads((BUNDLED_LANDING / "adp" / "synatra.json").read_bytes())[:2]
    for record in records:
        record["id"] = f"flow-{record['id']}"
        record["content"][0]["content"] += f" ({MARKER})"
    return json.dumps(records).encode()


def sft_text(data: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in (data / "sft").glob("*/*.jsonl"))


def test_a_dropped_file_reaches_the_sft_files_and_release_folder_but_not_the_hub(tmp_path):
    landing, data = tmp_path / "landing", tmp_path / "data"
    landing.mkdir()
    hub = FakeHub(TOKEN)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("BIGACTION_LLM_", "BIGACTION_HUB_")) and k != "DAGSTER_HOME"
    }
    env |= {
        "BIGACTION_DATA_DIR": str(data),
        "BIGACTION_LANDING_DIR": str(landing),
        "BIGACTION_HUB_REPO": "bigaction/ui-flow",
        "HF_TOKEN": TOKEN,
        "HF_ENDPOINT": hub.url,
    }
    try:
        with (
            running_ui(env, tmp_path / "ui.log", START_TIMEOUT),
            dg.DagsterInstance.from_config(str(data / "dagster")) as instance,
        ):
            wait_for(lambda: sensor_ticks(instance, LANDING_SENSOR), START_TIMEOUT, "first tick")
            assert not instance.get_run_records(limit=1), "an empty landing runs nothing"
            drop_file(landing, "adp/ui_flow.json", two_records())

            wait_for(lambda: MARKER in sft_text(data), FLOW_TIMEOUT, "the SFT files")
            card = data / "release" / "README.md"
            wait_for(card.is_file, FLOW_TIMEOUT, "the release folder")
            wait_for(
                lambda: all(r.dagster_run.status in FINISHED for r in runs_since(instance, 0)),
                FLOW_TIMEOUT,
                "every run finished",
            )
            records = runs_since(instance, 0)
            materialized = {
                key.to_user_string()
                for key in instance.get_asset_keys()
                if instance.get_latest_materialization_event(key)
            }
    except Exception:
        print((tmp_path / "ui.log").read_text(errors="replace")[-6000:])
        raise
    finally:
        hub.stop()
    assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in records), [
        (r.dagster_run.job_name, r.dagster_run.status) for r in records
    ]
    [dataset_run] = [r.dagster_run for r in records if r.dagster_run.job_name == "build_dataset"]
    assert dataset_run.tags["dagster/partition"] == "adp.ui_flow"
    assert "in_process" in dataset_run.run_config["execution"]["config"], "a small dataset"
    assert {"sft_files", "hub_release", "benchmark_snapshot"} <= materialized
    assert "bigaction/ui-flow" in card.read_text(encoding="utf-8"), "the card names the repo"
    assert "hub_revision" not in materialized
    assert not hub.repos and not hub.requests, "nothing was pushed, nor even asked"
