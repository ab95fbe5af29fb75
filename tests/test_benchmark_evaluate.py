"""Scoring answers: predictions files, statuses, and a live model through both turns."""

from __future__ import annotations

import json

import orjson

from bigaction_assets.benchmark.evaluate import (
    ask_two_turns,
    evaluate_row,
    evaluate_rows,
    parse_prediction,
    read_predictions,
)

ROW = {
    "task_id": "t", "step": 0, "episode_id": "mind2web/t", "dataset": "mind2web.test_task_x",
    "split": "test_task", "is_valid": True, "text_only_valid": True, "choices_sha": "abc",
    "candidate_ids": ["10", "11", "12"],
    "target_ids": ["11"], "target_op": "TYPE", "target_op_value": "New York",
    "prompt_0": json.dumps([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]),
    "prompt_1": json.dumps([{"role": "user", "content": "choose"}]),
}  # fmt: skip


def write(tmp_path, lines):
    path = tmp_path / "predictions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_statuses_and_scores(tmp_path):
    path = write(tmp_path, [
        json.dumps({"model": "a", "task_id": "t", "step": 0, "choices_sha": "abc",
                    "answers": ["...", "ELEMENT: B\nACTION: TYPE\nVALUE: New York"]}),
        json.dumps({"model": "b", "task_id": "t", "step": 0, "answer": "I am not sure."}),
        json.dumps({"model": "c", "task_id": "t", "step": 0, "choices_sha": "other",
                    "answer": "ELEMENT: B\nACTION: TYPE\nVALUE: New York"}),
        json.dumps({"model": "e", "task_id": "t", "step": 0,
                    "answer": "ELEMENT: D\nACTION: TYPE\nVALUE: New York"}),
        json.dumps({"model": "d", "task_id": "other", "step": 0, "answer": "ELEMENT: A"}),
        "{not json",
        json.dumps({"model": "a", "task_id": "t", "step": "0", "answer": "x"}),
        json.dumps({"model": "a", "task_id": "t", "step": 0, "answer": "repeated"}),
    ])  # fmt: skip
    predictions, problems = read_predictions([path])
    assert [p.line for p in problems] == [6, 7, 8]
    results = {r["model"]: r for r in evaluate_rows([ROW], predictions)}
    assert results["a"]["status"] == "answered" and results["a"]["step_success"]
    assert results["a"]["predicted_id"] == "11" and results["a"]["op_f1"] == 1.0
    assert results["b"]["status"] == "unparsed" and not results["b"]["element_correct"]
    assert results["c"]["status"] == "stale" and results["c"]["op_f1"] == 0.0
    assert results["d"]["status"] == "missing" and results["d"]["step_success"] is False
    # D is the "none of the others" choice here: not an element, so not correct
    assert results["e"]["predicted_id"] is None and not results["e"]["element_correct"]


def test_invalid_steps_are_not_scored():
    result = evaluate_row("a", {**ROW, "is_valid": False, "text_only_valid": False}, None)
    assert result["status"] == "invalid_step" and result["op_f1"] is None


def test_each_mode_scores_its_own_valid_steps(tmp_path):
    """A step without its screenshot is scored in the text-only mode and left out of the
    screenshot mode; a file's lines say their mode (text when they do not)."""
    blind = {**ROW, "is_valid": False, "invalid_reason": "no_screenshot"}
    answer = "ELEMENT: B\nACTION: TYPE\nVALUE: New York"
    path = write(tmp_path, [
        json.dumps({"model": "m", "task_id": "t", "step": 0, "answer": answer}),
        json.dumps({"model": "m", "task_id": "t", "step": 0, "answer": answer,
                    "mode": "screenshot"}),
        json.dumps({"model": "m", "task_id": "t", "step": 0, "answer": answer, "mode": "audio"}),
    ])  # fmt: skip
    predictions, problems = read_predictions([path])
    assert [(p.line, "mode" in p.reason) for p in problems] == [(3, True)]
    results = {r["mode"]: r for r in evaluate_rows([blind], predictions)}
    assert results["text"]["status"] == "answered" and results["text"]["step_success"]
    assert results["screenshot"]["status"] == "invalid_step"
    assert {r["mode"]: r["status"] for r in evaluate_rows([ROW], predictions)} == {
        "text": "answered",
        "screenshot": "answered",
    }


def test_a_live_model_answers_both_turns_with_the_history():
    seen = []

    def respond(messages):
        seen.append(messages)
        return (
            "Type New York in the From box."
            if len(seen) == 1
            else "ELEMENT: B\nACTION: TYPE\nVALUE: New York"
        )

    record = ask_two_turns(respond, ROW, "live")
    assert [m["role"] for m in seen[0]] == ["system", "user"]
    assert [m["role"] for m in seen[1]] == ["system", "user", "assistant", "user"]
    assert seen[1][2]["content"] == "Type New York in the From box."
    prediction_file = orjson.dumps(record).decode()
    assert json.loads(prediction_file)["choices_sha"] == "abc"
    result = evaluate_row("live", ROW, parse_prediction(orjson.loads(prediction_file)))
    assert result["step_success"]
