"""The thoughts stage through Dagster against a scripted local model: one thought per action
that had none, a rerun that calls nothing, failures and the budget in the table and metadata,
SFT taking recorded thoughts first and generated ones second, and no model at all."""

from __future__ import annotations

from typing import Any

import dagster as dg
import duckdb
import pyarrow.parquet as pq
import pytest
from conftest import with_llm
from llm_server import Reply, ScriptedServer

from bigaction_assets.defs.llm_resource import LLMResource

PARTITIONS = "datasets"
UPSTREAM = dg.AssetSelection.groups("raw", "standardized")
THOUGHTS = dg.AssetSelection.assets("thoughts")
SFT = dg.AssetSelection.assets("sft_examples")
MIND2WEB = "mind2web.train_demo"  # 14 actions, none with a recorded thought
WEBARENA = "adp.webarena_successful"  # 8 actions, 6 with a recorded thought


@pytest.fixture
def build(graph, dagster_lake, ephemeral_instance):
    """`build(key, selection, llm)` materializes one dataset's selection."""

    def _build(key: str, selection, llm: LLMResource | None = None, run_config=None):
        if not ephemeral_instance.has_dynamic_partition(PARTITIONS, key):
            ephemeral_instance.add_dynamic_partitions(PARTITIONS, [key])
            adapter, name = key.split(".", 1)
            dagster_lake.add_bundled(adapter, name)
            upstream = dg.materialize(
                graph, partition_key=key, instance=ephemeral_instance,
                resources={"lake": dagster_lake.resource}, selection=UPSTREAM,
            )  # fmt: skip
            assert upstream.success
        return dg.materialize(
            with_llm(graph, llm or LLMResource()), partition_key=key,
            instance=ephemeral_instance, selection=selection,
            resources={"lake": dagster_lake.resource}, run_config=run_config,
            raise_on_error=False,
        )  # fmt: skip

    return _build


def scripted_llm(server: ScriptedServer, **fields) -> LLMResource:
    return LLMResource(base_url=server.base_url, model="scripted-7b", **fields)


def metadata(result: dg.ExecuteInProcessResult, asset: str = "thoughts") -> dict[str, Any]:
    [event] = result.asset_materializations_for_node(asset)
    return {key: getattr(value, "value", value) for key, value in event.metadata.items()}


def thought_rows(dagster_lake, key: str) -> list[dict[str, Any]]:
    return pq.read_table(dagster_lake.table("thoughts", "thoughts", key)).to_pylist()


def checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_without_a_model_the_stage_says_so_and_calls_nothing(build, dagster_lake):
    result = build(MIND2WEB, THOUGHTS | SFT)
    assert result.success
    meta = metadata(result)
    assert meta["llm"] == "no model configured"
    assert meta["actions_without_thought"] == 14 and meta["dagster/row_count"] == 0
    assert thought_rows(dagster_lake, MIND2WEB) == []
    assert metadata(result, "sft_examples")["thought_sources"] == {"none": 4}


def test_every_missing_thought_is_generated_once_and_a_rerun_calls_nothing(build, dagster_lake):
    with ScriptedServer() as server:
        first = build(MIND2WEB, THOUGHTS, scripted_llm(server))
        assert first.success and len(server.requests) == 14
        rows = thought_rows(dagster_lake, MIND2WEB)
        path = dagster_lake.table("thoughts", "thoughts", MIND2WEB)
        written = path.read_bytes()
        again = build(MIND2WEB, THOUGHTS, scripted_llm(server))
        assert again.success and len(server.requests) == 14  # nothing asked twice
    meta, rerun = metadata(first), metadata(again)
    assert meta["calls_made"] == 14 and meta["cache_hits"] == 0 and meta["generated_now"] == 14
    assert rerun["calls_made"] == 0 and rerun["cache_hits"] == 14
    assert path.read_bytes() == written  # rebuilt from the cache, byte for byte
    assert len(rows) == 14 and {r["status"] for r in rows} == {"generated"}
    events = pq.read_table(dagster_lake.table("standardized", "events", MIND2WEB)).to_pylist()
    actions = {(e["episode_id"], e["idx"]) for e in events if e["kind"].endswith("_action")}
    assert {(r["episode_id"], r["idx"]) for r in rows} == actions
    assert all(r["thought"].startswith("I take this step") for r in rows)
    assert all(r["model"] == "scripted-7b" and r["prompt_tokens"] > 0 for r in rows)
    assert meta["tokens_in"] == sum(r["prompt_tokens"] for r in rows)
    assert meta["cost_usd"] == 0 and meta["price_known"] is False
    assert "I take this step" in meta["examples"] and meta["failures_by_reason"] == {}
    assert checks(first)["thoughts_match_actions"]
    # what the model was shown: the task, the history so far, the action
    prompt = server.requests[0].last_user_text
    assert prompt.startswith("Task: ") and "Next action: " in prompt


def test_prompts_show_the_task_history_and_action_within_budgets(build, dagster_lake):
    with ScriptedServer() as server:
        build(MIND2WEB, THOUGHTS, scripted_llm(server))
    prompts = [request.last_user_text for request in server.requests]
    assert all("Task: " in p and "Next action: " in p for p in prompts)
    history = [p.split("What happened so far:", 1)[1].split("Next action:")[0] for p in prompts]
    firsts = [h for h in history if "\nAction: " not in h]
    assert len(firsts) == 4  # one first action per episode: no earlier action shown
    assert all("Observation: [Current URL" in h for h in history)  # the page before it
    assert all(h.count("[... truncated to 768 tokens ...]") >= 1 for h in history)
    assert sum("earlier events left out" in h for h in history) >= 1  # 3,072-token history
    assert all("User: " not in h for h in history), "the task is not repeated as a message"


def test_prices_cost_and_a_token_budget_that_leaves_the_rest_for_the_next_run(build, dagster_lake):
    prices = {"scripted-7b": {"input_per_million": 2.0, "output_per_million": 8.0}}
    with ScriptedServer() as server:
        limited = build(MIND2WEB, THOUGHTS, scripted_llm(server, prices=prices, budget_tokens=6000))
        assert limited.success
        meta = metadata(limited)
        rows = thought_rows(dagster_lake, MIND2WEB)
        deferred = [r for r in rows if r["status"] == "deferred"]
        assert 0 < meta["generated_now"] < 14 and meta["deferred_by_budget"] == len(deferred) > 0
        assert {r["failure_reason"] for r in deferred} == {"budget_exhausted"}
        assert meta["tokens_in"] + meta["tokens_out"] <= 6000
        expected = (meta["tokens_in"] * 2.0 + meta["tokens_out"] * 8.0) / 1e6
        assert meta["cost_usd"] == pytest.approx(expected, abs=1e-6) and meta["price_known"]
        rest = build(MIND2WEB, THOUGHTS, scripted_llm(server, prices=prices))
    after = metadata(rest)
    assert after["cache_hits"] == meta["generated_now"]
    assert after["generated_now"] == len(deferred) == after["calls_made"]
    assert {r["status"] for r in thought_rows(dagster_lake, MIND2WEB)} == {"generated"}


def test_invalid_replies_become_failures_with_reasons_never_thoughts(build, dagster_lake):
    def script(request):
        if "Next action: click" in request.last_user_text:  # every time it is asked
            return Reply(content="I'm sorry, I cannot help with that.")
        return Reply()

    with ScriptedServer(script) as server:
        result = build(MIND2WEB, THOUGHTS | SFT, scripted_llm(server))
    assert result.success
    meta, rows = metadata(result), thought_rows(dagster_lake, MIND2WEB)
    failed = [r for r in rows if r["status"] == "failed"]
    assert failed and meta["failures_by_reason"] == {"refusal": len(failed)}
    assert all(r["thought"] is None and r["failure_reason"] == "refusal" for r in failed)
    assert meta["invalid_replies_by_reason"]["refusal"] >= len(failed)
    sources = metadata(result, "sft_examples")["thought_sources"]
    assert set(sources) <= {"generated", "generated+none"} and "generated+none" in sources


def test_sft_takes_recorded_thoughts_first_and_says_where_they_came_from(build, dagster_lake):
    with ScriptedServer() as server:
        result = build(WEBARENA, THOUGHTS | SFT, scripted_llm(server))
    assert result.success
    rows = thought_rows(dagster_lake, WEBARENA)
    assert len(rows) == len(server.requests) == 2  # only the two actions without a thought
    sources = metadata(result, "sft_examples")["thought_sources"]
    assert sources.get("recorded+generated", 0) >= 1 and sources.get("recorded", 0) >= 1
    glob = dagster_lake.table("sft", "sft_examples", WEBARENA).as_posix()
    texts = [r[0] for r in duckdb.sql(f"select openai from '{glob}'").fetchall()]
    for row in rows:
        assert any(row["thought"] in text for text in texts)
