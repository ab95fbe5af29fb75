"""A live model on the benchmark: both turns asked of a scripted local model through the cache,
scored exactly as predictions files are, and ranked on the leaderboard beside them."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import dagster as dg
import orjson
import pyarrow.parquet as pq
import pytest
from conftest import with_llm
from llm_server import Reply, ScriptedServer

from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.images.store import iter_images
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
    dagster_lake.add_bundled("mind2web", "train_demo", images=True)
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


def run(
    pipeline, dagster_lake, instance, selection, llm=None, mode=None
) -> dg.ExecuteInProcessResult:
    config = {"ops": {"model_answers": {"config": {"mode": mode}}}} if mode else None
    return dg.materialize(
        with_llm(pipeline, llm or LLMResource()), partition_key=KEY, instance=instance,
        selection=selection, resources={"lake": dagster_lake.resource}, run_config=config,
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
        assert metadata(again, "model_answers")["other_models_kept"] == ["bad (screenshot)"]
    # turn two carries turn one and the model's own reply to it
    second = next(r for r in server.requests if r.last_user_text in right)
    assert [m["role"] for m in second.messages][-3:] == ["user", "assistant", "user"]

    scored = run(pipeline, dagster_lake, ephemeral_instance, SCORES)
    assert scored.success
    assert metadata(scored, "eval_results")["live_models"] == ["bad", "good"]
    board = pq.read_table(dagster_lake.table("benchmark", "leaderboard", "all")).to_pylist()
    overall = {row["model"]: row for row in board if row["split"] == "all"}
    assert {overall[name]["mode"] for name in ("good", "bad")} == {"screenshot"}
    assert {"good", "bad"} <= set(overall)
    good, bad = overall["good"], overall["bad"]
    assert good["steps"] == bad["steps"] == steps and good["missing"] == bad["missing"] == 0
    assert good["element_accuracy_micro"] == good["step_success_micro"] == 1.0
    assert good["task_success"] == 1.0
    for metric in ("element_accuracy_micro", "step_success_macro", "task_success"):
        assert bad[metric] < good[metric], metric


def test_turn_one_carries_the_screenshot_with_the_lakes_bytes(
    lake_with_snapshot, dagster_lake, ephemeral_instance
):
    """SeeAct's first turn holds the step's screenshot as an OpenAI `image_url` part: a data
    URL of exactly the bytes the lake stores under the step's image_sha."""
    pipeline, right = lake_with_snapshot, seeact_answers(dagster_lake)
    snapshot = pq.read_table(dagster_lake.table("benchmark", "benchmark_snapshot", KEY))
    shots = {row["image_sha"] for row in snapshot.to_pylist()}
    assert None not in shots and len(shots) > 1
    stored = {row["image_sha"]: row["bytes"] for row in iter_images(dagster_lake.root, shots)}
    assert set(stored) == shots
    with ScriptedServer(scripted_models(right)) as server:
        llm = LLMResource(base_url=server.base_url, model="good")
        assert run(pipeline, dagster_lake, ephemeral_instance, ANSWERS, llm).success
    firsts = [r for r in server.requests if r.last_user_text not in right]
    assert len(firsts) == len(right) == snapshot.num_rows
    sent = set()
    for request in firsts:
        [url] = request.image_urls
        head, data = url.split(",", 1)
        assert head == "data:image/webp;base64"
        sha = hashlib.sha256(base64.b64decode(data)).hexdigest()
        assert base64.b64decode(data) == stored[sha]
        [user] = [m for m in request.messages if m["role"] == "user"]
        assert user["content"][0]["type"] == "text" and "Task:" in user["content"][0]["text"]
        sent.add(sha)
    assert sent == shots  # each step its own page's screenshot
    seconds = [r for r in server.requests if r.last_user_text in right]
    assert all(len(r.image_urls) == 1 for r in seconds)  # turn two keeps turn one's history


def test_a_screenshot_the_lake_lost_fails_its_step_with_the_reason(
    lake_with_snapshot, dagster_lake, ephemeral_instance
):
    """A snapshot naming an image no longer in `images` asks nothing for that step: it is
    failed with its reason, never sent without the screenshot it promises."""
    dagster_lake.table("standardized", "images", KEY).unlink()
    with ScriptedServer(scripted_models({})) as server:
        llm = LLMResource(base_url=server.base_url, model="good")
        result = run(lake_with_snapshot, dagster_lake, ephemeral_instance, ANSWERS, llm)
        assert result.success and server.requests == []
    rows = pq.read_table(dagster_lake.table("benchmark", "model_answers", KEY)).to_pylist()
    assert rows and {(r["status"], r["failure_reason"]) for r in rows} == {
        ("failed", "screenshot_not_in_lake")
    }


def test_the_text_only_mode_asks_without_images_and_ranks_apart(
    graph, dagster_lake, ephemeral_instance
):
    """A step whose screenshot is missing is not asked in screenshot mode; the text-only mode
    asks every step without any image, and the leaderboard names each model's mode."""
    target = dagster_lake.add_bundled("mind2web", "train_demo", images=True)
    shots = target.with_name("train_demo.images")
    lost = sorted(shots.glob("*.webp"))[0]
    lost.unlink()
    for partitions in ("datasets", "benchmark_datasets"):
        ephemeral_instance.add_dynamic_partitions(partitions, [KEY])
    for selection in (SPINE, SNAPSHOT):
        assert run(graph, dagster_lake, ephemeral_instance, selection).success
    rows = pq.read_table(dagster_lake.table("benchmark", "benchmark_snapshot", KEY)).to_pylist()
    blind = [row for row in rows if row["action_uid"] == lost.stem]
    assert [row["invalid_reason"] for row in blind] == ["no_screenshot"]
    right = seeact_answers(dagster_lake)  # the steps valid with a screenshot
    text_answers = {**right}
    for row in blind:  # the grounding answer of the blind step, for the text-only run
        [question] = orjson.loads(row["prompt_1"])
        value = row["target_op_value"] or "None"
        text_answers[question["content"]] = (
            f"ELEMENT: {row['answer_label']}\nACTION: {row['target_op']}\nVALUE: {value}"
        )
    with ScriptedServer(scripted_models(text_answers)) as server:
        llm = LLMResource(base_url=server.base_url, model="good")
        shown = run(graph, dagster_lake, ephemeral_instance, ANSWERS, llm)
        assert metadata(shown, "model_answers")["invalid_steps_not_asked"] == len(blind)
        asked_with_images = len(server.requests)
        assert all(r.image_urls for r in server.requests)
        text = run(graph, dagster_lake, ephemeral_instance, ANSWERS, llm, mode="text")
        assert metadata(text, "model_answers")["invalid_steps_not_asked"] == 0
        text_requests = server.requests[asked_with_images:]
    assert len(text_requests) == 2 * len(rows) and not any(r.image_urls for r in text_requests)
    assert metadata(text, "model_answers")["other_models_kept"] == ["good (screenshot)"]
    assert run(graph, dagster_lake, ephemeral_instance, SCORES).success
    board = pq.read_table(dagster_lake.table("benchmark", "leaderboard", "all")).to_pylist()
    good = {row["mode"]: row for row in board if row["model"] == "good" and row["split"] == "all"}
    assert good["screenshot"]["steps"] == len(rows) - 1 and good["screenshot"]["invalid_steps"] == 1
    assert good["text"]["steps"] == len(rows) and good["text"]["invalid_steps"] == 0
    assert good["text"]["step_success_micro"] == good["screenshot"]["step_success_micro"] == 1.0
    table = (dagster_lake.data / "benchmark" / "leaderboard.md").read_text()
    assert "| good | screenshot | all |" in table and "| good | text | all |" in table


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
