"""The thoughts stage against a scripted local model that counts its calls: the actions whose
thoughts ADP's cache already holds are never asked for, and SFT says where each came from."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
from conftest import with_llm
from llm_server import ScriptedServer

from bigaction_assets import ingest
from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.sources.adp import ADAPTER as ADP

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "adp_thoughts"
UPSTREAM = dg.AssetSelection.groups("raw", "standardized")
DOWNSTREAM = dg.AssetSelection.assets("thoughts", "sft_examples")
CACHED = 13  # actions of the fixture's two trajectories that the cache holds a thought for


def build(graph, lake, instance, key: str, server: ScriptedServer) -> dict[str, Any]:
    """Standardize one dataset, then run thoughts and SFT on it; metadata by asset."""
    instance.add_dynamic_partitions("datasets", [key])
    resources = {"lake": lake.resource}
    upstream = dg.materialize(
        graph, partition_key=key, instance=instance, resources=resources, selection=UPSTREAM
    )
    llm = LLMResource(base_url=server.base_url, model="scripted-7b")
    downstream = dg.materialize(
        with_llm(graph, llm), partition_key=key, instance=instance, resources=resources,
        selection=DOWNSTREAM,
    )  # fmt: skip
    assert upstream.success and downstream.success
    metadata = {}
    for result in (upstream, downstream):
        for event in result.get_asset_materialization_events():
            found = event.materialization.metadata
            name = event.asset_key.path[-1]
            metadata[name] = {k: getattr(v, "value", v) for k, v in found.items()}
    return metadata


def table(lake, group: str, asset: str, key: str) -> list[dict[str, Any]]:
    return pq.read_table(lake.table(group, asset, key)).to_pylist()


def test_cached_thoughts_cost_no_call(graph, dagster_lake, ephemeral_instance):
    adp = dagster_lake.landing / "adp"
    adp.mkdir()
    for path in FIXTURE.glob("swe-gym*.json"):
        shutil.copy(path, adp / path.name)
    shutil.copy(FIXTURE / "swe-gym.json", adp / "bare.json")  # the same runs, no cache

    with ScriptedServer() as server:
        cached = build(graph, dagster_lake, ephemeral_instance, "adp.swe-gym", server)
        with_cache = len(server.requests)
        build(graph, dagster_lake, ephemeral_instance, "adp.bare", server)
        without_cache = len(server.requests) - with_cache

    events = table(dagster_lake, "standardized", "events", "adp.swe-gym")
    actions = [e for e in events if e["kind"].endswith("_action") and e["actor"] == "agent"]
    from_cache = {
        (e["episode_id"], e["idx"]) for e in actions if e["thought_source"] == "adp_generated"
    }
    missing = {(e["episode_id"], e["idx"]) for e in actions if not e["description"]}
    assert len(from_cache) == CACHED and missing
    # one call per action with no thought at all: none for a thought the cache held
    assert with_cache == len(missing) and without_cache == with_cache + CACHED
    asked = {
        (r["episode_id"], r["idx"])
        for r in table(dagster_lake, "thoughts", "thoughts", "adp.swe-gym")
    }
    assert asked == missing and not asked & from_cache
    assert cached["episodes"]["input_tallies"] == {
        "adp_thoughts_for_absent_trajectories": 3,
        "adp_thoughts_used": CACHED,
    }
    # every example (a window of an episode) shows all three kinds: no action without one
    assert set(cached["sft_examples"]["thought_sources"]) == {"recorded+adp_generated+generated"}


def test_the_raw_table_gives_the_same_thoughts_as_the_raw_pass(
    graph, dagster_lake, ephemeral_instance
):
    """The spine standardizes in the raw step's pass, else from the raw table: with a thought
    cache, whose record comes first, both give the same events and tallies."""
    adp = dagster_lake.landing / "adp"
    adp.mkdir()
    for path in FIXTURE.glob("swe-gym*.json"):
        shutil.copy(path, adp / path.name)
    key = "adp.swe-gym"
    ephemeral_instance.add_dynamic_partitions("datasets", [key])

    def run(selection) -> dict[str, Any]:
        result = dg.materialize(
            graph, partition_key=key, instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource}, selection=selection,
        )  # fmt: skip
        [episodes] = [
            e
            for e in result.get_asset_materialization_events()
            if e.asset_key.path[-1] == "episodes"
        ]
        return {k: getattr(v, "value", v) for k, v in episodes.materialization.metadata.items()}

    from_pass = run(UPSTREAM)
    # the raw rows of both files (the cache's record numbers start at 0 too), each once
    files = ingest.dataset_files(dagster_lake.landing, ADP, "swe-gym")
    landed = [r["text"] for r in ingest.raw_records(ADP, "swe-gym", files, dagster_lake.landing)]
    stored = ingest.raw_partition_rows(dagster_lake.data / "lake", key, unreadable=False)
    assert len(files) == 2 and [r["text"] for r in stored] == landed
    events = dagster_lake.table("standardized", "events", key).read_bytes()
    from_table = run(dg.AssetSelection.groups("standardized"))  # nothing staged any more
    assert dagster_lake.table("standardized", "events", key).read_bytes() == events
    assert from_pass["input_tallies"] == from_table["input_tallies"]
    assert from_table["input_tallies"]["adp_thoughts_used"] == CACHED
