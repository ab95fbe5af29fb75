"""A live model on the benchmark: both turns asked of a scripted local model through the cache,
scored exactly as predictions files are, and ranked on the leaderboard beside them."""

from __future__ import annotations

from typing import Any

import dagster as dg
import orjson
import pyarrow.parquet as pq
import pytest
from conftest import with_llm
from llm_server import Reply, ScriptedServer

from bigaction_assets.defs.resources import LLMResource
from bigaction_assets.llm.forget import erase_subjects, subjects_present
from bigaction_assets.privacy.erasure import Forgotten, erase_lake
from bigaction_assets.privacy.register import table_offenders

KEY = "mind2web.train_demo"
SPINE = dg.AssetSelection.groups("raw", "standardized")
SNAPSHOT = dg.AssetSelection.assets("benchmark_snapshot")  # partitioned apart from the spine
ANSWERS = dg.AssetSelection.assets("model_answers")
SCORES = dg.AssetSelection.assets("eval_results", "leaderboard")


@pytest.fixture
def lake_with_snapshot(graph, dagster_lake, ephemeral_instance):
    pipeline = graph
    dagster_lake.add_bundled("mind2web", "train_demo")
    for partitions in ("datasets", "benchmark_datasets"):
        ephemeral_instance.add_dynamic_partitions(partitions, [KEY])
    for selection in (SPINE, SNAPSHOT):
        built = dg.materialize(
            pipeline, partition_key=KEY, instance=ephemeral_instance, selection=selection,
            resources={"lake": dagster_lake.resource},
        )  # fmt: skip
        assert built.success
    return pipeline


def seeact_answers(dagster_lake) -> dict[str, str]:
    """The right reply to each step's grounding question, by the question's text."""
    path = dagster_lake.table("benchmark", "benchmark_snapshot", KEY)
    right = {}
    for row in pq.read_table(path).to_pylist():
        if row["is_valid"]:
            [question] = orjson.loads(row["prompt_1"])
            value = row["target_op_value"] or "None"
            right[question["content"]] = (
                f"ELEMENT: {row['answer_label']}\nACTION: {row['target_op']}\nVALUE: {value}"
            )
    return right


def scripted_models(right: dict[str, str]):
    """`good` picks the target; `bad` always takes the first choice and clicks."""

    def script(request):
        question = request.last_user_text
        if question not in right:  # turn one: describe the next action
            return Reply(content="I will look for the element the task needs on this page.")
        if request.model == "good":
            return Reply(content=right[question])
        return Reply(content="ELEMENT: A\nACTION: CLICK\nVALUE: None")

    return script


def run(pipeline, dagster_lake, instance, selection, llm=None) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        with_llm(pipeline, llm or LLMResource()), partition_key=KEY, instance=instance,
        selection=selection, resources={"lake": dagster_lake.resource},
    )  # fmt: skip


def metadata(result, asset: str) -> dict[str, Any]:
    [event] = [
        e for e in result.asset_materializations_for_node(asset) if e.asset_key.path == [asset]
    ]
    return {key: getattr(value, "value", value) for key, value in event.metadata.items()}


def test_a_live_model_is_asked_scored_and_ranked(
    lake_with_snapshot, dagster_lake, ephemeral_instance
):
    pipeline, right = lake_with_snapshot, seeact_answers(dagster_lake)
    steps = len(right)
    with ScriptedServer(scripted_models(right)) as server:
        for name in ("good", "bad"):
            llm = LLMResource(base_url=server.base_url, model=name)
            result = run(pipeline, dagster_lake, ephemeral_instance, ANSWERS, llm)
            meta = metadata(result, "model_answers")
            assert meta["calls_made"] == 2 * steps and meta["cache_hits"] == 0
            assert meta["steps_answered_by_status"] == {"answered": steps}
        asked = len(server.requests)
        again = run(pipeline, dagster_lake, ephemeral_instance, ANSWERS,
                    LLMResource(base_url=server.base_url, model="good"))  # fmt: skip
        assert len(server.requests) == asked == 4 * steps  # the rerun asked nothing
        assert metadata(again, "model_answers")["cache_hits"] == 2 * steps
        assert metadata(again, "model_answers")["other_models_kept"] == ["bad"]
    # turn two carries turn one and the model's own reply to it
    second = next(r for r in server.requests if r.last_user_text in right)
    assert [m["role"] for m in second.messages][-3:] == ["user", "assistant", "user"]

    scored = run(pipeline, dagster_lake, ephemeral_instance, SCORES)
    assert scored.success
    assert metadata(scored, "eval_results")["live_models"] == ["bad", "good"]
    board = pq.read_table(dagster_lake.table("benchmark", "leaderboard", "all")).to_pylist()
    overall = {row["model"]: row for row in board if row["split"] == "all"}
    assert {"good", "bad"} <= set(overall)
    good, bad = overall["good"], overall["bad"]
    assert good["steps"] == bad["steps"] == steps and good["missing"] == bad["missing"] == 0
    assert good["element_accuracy_micro"] == good["step_success_micro"] == 1.0
    assert good["task_success"] == 1.0
    for metric in ("element_accuracy_micro", "step_success_macro", "task_success"):
        assert bad[metric] < good[metric], metric


def test_failures_and_no_model(lake_with_snapshot, dagster_lake, ephemeral_instance):
    pipeline = lake_with_snapshot
    nothing = run(pipeline, dagster_lake, ephemeral_instance, ANSWERS)
    assert metadata(nothing, "model_answers")["llm"] == "no model configured"
    assert pq.read_table(dagster_lake.table("benchmark", "model_answers", KEY)).num_rows == 0
    with ScriptedServer(lambda _request: Reply(status=400)) as server:
        llm = LLMResource(base_url=server.base_url, model="broken")
        result = run(pipeline, dagster_lake, ephemeral_instance, ANSWERS | SCORES, llm)
    rows = pq.read_table(dagster_lake.table("benchmark", "model_answers", KEY)).to_pylist()
    assert rows and {(r["status"], r["failure_reason"]) for r in rows} == {("failed", "http_400")}
    assert all(r["answer_one"] is None and r["answer_two"] is None for r in rows)
    assert metadata(result, "model_answers")["failures_by_reason"] == {"http_400": len(rows)}
    assert "broken" not in metadata(result, "eval_results")["live_models"]  # nothing to score


def test_erasure_reaches_live_answers_and_their_calls(
    lake_with_snapshot, dagster_lake, ephemeral_instance
):
    """model_answers and eval_results rows carry episode_id: erasing an episode removes their
    rows and the cached calls (both turns) whose prompts held its page."""
    pipeline = lake_with_snapshot
    with ScriptedServer(scripted_models(seeact_answers(dagster_lake))) as server:
        llm = LLMResource(base_url=server.base_url, model="good")
        assert run(pipeline, dagster_lake, ephemeral_instance, ANSWERS, llm).success
    assert run(pipeline, dagster_lake, ephemeral_instance, SCORES).success
    path = dagster_lake.table("benchmark", "model_answers", KEY)
    rows = pq.read_table(path).to_pylist()
    episode = rows[0]["episode_id"]
    theirs = sum(r["episode_id"] == episode for r in rows)
    cache = dagster_lake.resource.llm_cache
    assert subjects_present(cache, [episode]) == 2 * theirs  # both turns of each step
    forgotten = Forgotten(frozenset(), frozenset({episode}))
    assert table_offenders(dagster_lake.root, "benchmark", "model_answers", forgotten)

    assert table_offenders(dagster_lake.root, "benchmark", "eval_results", forgotten)

    erased = erase_lake(dagster_lake.root, forgotten)
    assert erased["benchmark/model_answers"] == {KEY: theirs}
    assert erased["benchmark/eval_results"] == {KEY: theirs}  # one model: one row per step
    assert not table_offenders(dagster_lake.root, "benchmark", "eval_results", forgotten)
    assert erase_subjects(cache, [episode]) == 2 * theirs
    assert not table_offenders(dagster_lake.root, "benchmark", "model_answers", forgotten)
    left = pq.read_table(path).to_pylist()
    assert len(left) == len(rows) - theirs and episode not in {r["episode_id"] for r in left}
    assert subjects_present(cache, [episode]) == 0
