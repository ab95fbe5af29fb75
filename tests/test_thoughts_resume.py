"""Kill and resume: a child process generating thoughts against a slow local model is killed
with SIGKILL mid-run and started again; only the calls that were in flight are asked twice. And
an interrupt (what Dagster sends when a run is terminated) stops the calls at once."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_ingest, write_standardized
from llm_server import ScriptedServer

from bigaction_assets.sources import adapters

KEY = "adp.synthetic"
EPISODES, ACTIONS = 8, 4  # 32 actions, none with a thought
CONCURRENCY = 4
ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys
from pathlib import Path
from bigaction_assets.llm.client import ClientSettings
from bigaction_assets.llm.session import LLMConfig
from bigaction_assets.thoughts.context import ContextSettings
from bigaction_assets.thoughts.generate import ask_for_thoughts

lake, cache, base_url, run_id, concurrency = sys.argv[1:]
config = LLMConfig(ClientSettings("slow-model", base_url), concurrency=int(concurrency))
run = ask_for_thoughts(Path(lake), "adp.synthetic", config, Path(cache), run_id, ContextSettings())
print(run.stats.requests, run.stats.cache_hits, flush=True)
"""


def synthetic_episodes() -> list[dict]:
    """ADP trajectories: a task, then page and click in turn, no thoughts recorded."""
    episodes = []
    for n in range(EPISODES):
        content: list[dict] = [
            {"class_": "text_observation", "content": f"Buy item {n}", "name": None,
             "source": "user"},
        ]  # fmt: skip
        for k in range(ACTIONS):
            content.append({
                "class_": "web_observation", "html": None, "url": f"https://shop.test/{n}/{k}",
                "axtree": f"[{k}] button 'Step {k} of item {n}'", "image_observation": None,
                "viewport_size": None,
            })  # fmt: skip
            content.append(
                {"class_": "api_action", "function": "click", "kwargs": {"bid": f'"{k}"'},
                 "description": None}
            )  # fmt: skip
        episodes.append({"id": str(n), "content": content, "details": {}})
    return episodes


def start_child(lake: Path, cache: Path, base_url: str, run_id: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", CHILD, str(lake), str(cache), base_url, run_id]
    return subprocess.Popen(
        [*command, str(CONCURRENCY)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def committed(cache: Path) -> int:
    with sqlite3.connect(cache) as con:
        return con.execute("select count(*) from calls where status = 'ok'").fetchone()[0]


def test_sigkill_mid_run_loses_only_the_calls_in_flight(tmp_path):
    landing, lake, cache = tmp_path / "landing", tmp_path / "lake", tmp_path / "calls.sqlite"
    source = landing / "adp" / "synthetic.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(synthetic_episodes()))
    ingested = run_ingest(adapters()["adp"], KEY, [source], landing)
    write_standardized(lake, KEY, ingested.tables)
    total = EPISODES * ACTIONS

    with ScriptedServer(latency=0.3) as server:
        child = start_child(lake, cache, server.base_url, "run-1")
        deadline = time.monotonic() + 60
        while server.answered < 2 * CONCURRENCY and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
        assert child.returncode == -signal.SIGKILL
        first_run = server.prompts_requested()
        done_before_kill = committed(cache)
        assert 2 * CONCURRENCY <= len(first_run) < total, "killed mid-run"

        again = start_child(lake, cache, server.base_url, "run-2")
        out, err = again.communicate(timeout=120)
        assert again.returncode == 0, err.decode()[-2000:]
        second_run = server.prompts_requested()[len(first_run) :]

    repeated = set(first_run) & set(second_run)
    assert len(repeated) <= CONCURRENCY  # only what was in flight when it died
    assert len(repeated) == len(set(first_run)) - done_before_kill  # and exactly that
    assert len(set(first_run) | set(second_run)) == total and committed(cache) == total
    requests, hits = map(int, out.split())
    assert requests == len(second_run) and hits == done_before_kill


DAGSTER_CHILD = """
import sys
import dagster as dg
from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.thoughts.assets import thoughts_asset

data, base_url = sys.argv[1:]
llm = LLMResource(base_url=base_url, model="slow-model", concurrency=2)
with dg.DagsterInstance.ephemeral() as instance:
    instance.add_dynamic_partitions("datasets", ["adp.synthetic"])
    dg.materialize([thoughts_asset(llm)], instance=instance, partition_key="adp.synthetic",
                   resources={"lake": LakeResource(landing_dir=data, data_dir=data)})
"""


def test_terminating_the_run_stops_the_calls_at_once(tmp_path):
    """Dagster terminates a run with SIGTERM and raises its interrupt from the signal handler;
    that must end the calls, not be swallowed by the event loop (uvloop runs signal handlers as
    loop callbacks and only logged it: a terminated run went on calling the model)."""
    data = tmp_path / "data"
    source = tmp_path / "landing" / "adp" / "synthetic.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(synthetic_episodes()))
    ingested = run_ingest(adapters()["adp"], KEY, [source], tmp_path / "landing")
    write_standardized(data / "lake", KEY, ingested.tables)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with ScriptedServer(latency=0.3) as server:
        child = subprocess.Popen(
            [sys.executable, "-c", DAGSTER_CHILD, str(data), server.base_url],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while server.answered < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        child.terminate()
        try:
            output, _ = child.communicate(timeout=10)
        finally:
            child.kill()
        asked = len(server.requests)
    said = output.decode(errors="replace")[-3000:]
    assert "DagsterExecutionInterruptedError" in said, said
    assert asked <= 4 * 2 < EPISODES * ACTIONS, f"the calls went on after the run ended:\n{said}"
