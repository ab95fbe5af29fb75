"""Forgetting reaches thoughts: a forgotten sender's rows leave the `thoughts` table, and the
LLM call cache forgets the prompts and replies built from their episodes."""

from __future__ import annotations

import sqlite3

import dagster as dg
import pyarrow.dataset as ds
from conftest import with_llm
from llm_server import Reply, ScriptedServer

from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.llm.forget import subjects_present
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.telemetry.sample import land_sample
from bigaction_assets.telemetry_batches import batch_files

DAY = "telemetry.2025-05-14"
DAY_BUILD = dg.AssetSelection.assets("raw_records", "thoughts") | dg.AssetSelection.groups(
    "standardized"
)


def rows(lake, group: str, asset: str) -> list[dict]:
    files = sorted((lake / group / asset).glob("*.parquet"))
    return ds.dataset(files, format="parquet").to_table().to_pylist() if files else []


def test_a_forgotten_sender_leaves_thoughts_and_the_call_cache(
    graph, dagster_lake, ephemeral_instance
):
    land_sample(dagster_lake.landing, Pseudonymizer.from_env(dev=True))

    def echo(request):  # a reply that quotes their data back, as thoughts do
        task = request.last_user_text.splitlines()[0].removeprefix("Task: ")
        return Reply(content=f"I act now to get this done: {task}")

    with ScriptedServer(echo) as server:
        llm = LLMResource(base_url=server.base_url, model="scripted")
        everything = with_llm(graph, llm)
        batches = sorted(batch_files(dagster_lake.landing))
        ephemeral_instance.add_dynamic_partitions("telemetry_batches", batches)
        ephemeral_instance.add_dynamic_partitions("datasets", [DAY])
        resources = {"lake": dagster_lake.resource}
        ranged = {"dagster/asset_partition_range_start": batches[0],
                  "dagster/asset_partition_range_end": batches[-1]}  # fmt: skip
        raw = dg.AssetSelection.assets("raw_telemetry")
        assert dg.materialize(everything, instance=ephemeral_instance, resources=resources,
                              tags=ranged, selection=raw).success  # fmt: skip
        assert dg.materialize(everything, instance=ephemeral_instance, resources=resources,
                              partition_key=DAY, selection=DAY_BUILD).success  # fmt: skip

        pseudonym = Pseudonymizer.from_env(dev=True).user("ana.garcia@example.org")
        theirs = {r["episode_id"] for r in rows(dagster_lake.root, "telemetry", "raw_telemetry")
                  if r["user_pseudonym"] == pseudonym}  # fmt: skip
        thoughts = rows(dagster_lake.root, "thoughts", "thoughts")
        assert theirs & {r["episode_id"] for r in thoughts}, "they have generated thoughts"
        others = {r["episode_id"] for r in thoughts} - theirs
        assert others, "and so do other senders"
        cache = dagster_lake.resource.llm_cache
        assert subjects_present(cache, theirs) > 0
        their_tasks = [r["task"] for r in rows(dagster_lake.root, "standardized", "episodes")
                       if r["episode_id"] in theirs and r["task"]]  # fmt: skip

        record_request(dagster_lake.landing, pseudonym, via="cli")
        erased = dg.materialize(
            everything, instance=ephemeral_instance, resources=resources,
            selection=dg.AssetSelection.assets("forgotten_users")
            | dg.AssetSelection.checks(dg.AssetCheckKey(dg.AssetKey("thoughts"),
                                                        "forgotten_users_absent")),
        )  # fmt: skip
    assert erased.success
    [check] = [
        e for e in erased.get_asset_check_evaluations() if e.asset_key == dg.AssetKey("thoughts")
    ]
    assert check.passed
    [made] = [
        m for m in erased.asset_materializations_for_node("forgotten_users")
        if m.asset_key == dg.AssetKey("forgotten_users")
    ]  # fmt: skip
    assert made.metadata["llm_calls_erased"].value > 0
    left = rows(dagster_lake.root, "thoughts", "thoughts")
    assert not theirs & {r["episode_id"] for r in left}
    assert others == {r["episode_id"] for r in left}, "other senders' thoughts stay"
    assert subjects_present(cache, theirs) == 0 and subjects_present(cache, others) > 0
    on_disk = b"".join(p.read_bytes() for p in cache.parent.glob(f"{cache.name}*"))
    assert not any(episode.encode() in on_disk for episode in theirs)
    assert their_tasks and not any(task.encode() in on_disk for task in their_tasks)
    with sqlite3.connect(cache) as con:
        kept = con.execute("select count(*) from calls").fetchone()[0]
    assert kept == len([r for r in left if r["status"] == "generated"])

    # A landing restored from before the request (or a batch the collector took before it) is
    # ingested again: nothing of hers comes back, and the model is asked nothing about her.
    land_sample(dagster_lake.landing, Pseudonymizer.from_env(dev=True))
    with ScriptedServer(echo) as server:
        again = with_llm(graph, LLMResource(base_url=server.base_url, model="scripted"))
        assert dg.materialize(again, instance=ephemeral_instance, resources=resources,
                              partition_key=DAY, selection=DAY_BUILD).success  # fmt: skip
    asked = "\n".join(r.last_user_text for r in server.requests)
    assert not any(task in asked for task in their_tasks)
    assert not theirs & {r["episode_id"] for r in rows(dagster_lake.root, "thoughts", "thoughts")}
    assert subjects_present(cache, theirs) == 0 and subjects_present(cache, others) > 0
