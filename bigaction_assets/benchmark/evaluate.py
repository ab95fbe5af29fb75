"""Scoring model answers against snapshot rows, from a predictions file or a live model.

A predictions file is JSONL, one line per (model, step): `{"model", "task_id", "step",
"answers": [turn one reply, turn two reply]}` (or `"answer"`: the grounding reply alone), and
optionally `"choices_sha"`, the snapshot's hash of the choices the model saw — a prediction made
on other choices (another seed or k) is then scored as `stale` rather than read against the
wrong letters — and `"mode"`: `screenshot` when turn one showed the step's screenshot, `text`
(the default: a file that does not say so was made without) when it did not. Each mode is
scored over its own valid steps and ranked apart. A live model is any function from chat
messages to reply text (`Responder`); `ask_two_turns` runs it through both turns and gives
the same record a file holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.benchmark.answers import parse_answer
from bigaction_assets.benchmark.metrics import score_step
from bigaction_assets.benchmark.prompts import label_index
from bigaction_assets.schemas.benchmark import MODES

Responder = Callable[[list[dict[str, Any]]], str]
PredictionKey = tuple[str, str, str, int]  # (model, mode, task_id, step)
TEXT_MODE = "text"


@dataclass(frozen=True)
class Prediction:
    model: str
    task_id: str
    step: int
    answer: str
    choices_sha: str | None = None
    mode: str = TEXT_MODE

    @property
    def key(self) -> PredictionKey:
        return (self.model, self.mode, self.task_id, self.step)


def valid_in(mode: str, row: dict[str, Any]) -> bool:
    """Whether a snapshot step is scored in `mode`: with its screenshot, or by its text alone."""
    return bool(row["is_valid"] if mode == "screenshot" else row["text_only_valid"])


@dataclass(frozen=True)
class PredictionProblem:
    """A line of a predictions file that could not be used, with why."""

    file: str
    line: int
    reason: str


def prediction_files(path: Path) -> list[Path]:
    """A `.jsonl` file, or every `.jsonl` file under a folder, in name order."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*.jsonl") if p.is_file())
    return [path] if path.exists() else []


def parse_prediction(value: Any) -> Prediction:
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    for key, kind in (("model", str), ("task_id", str), ("step", int)):
        if not isinstance(value.get(key), kind) or isinstance(value.get(key), bool):
            raise ValueError(f"`{key}` missing or not a {kind.__name__}")
    answers = value.get("answers")
    answer = answers[-1] if isinstance(answers, list) and answers else value.get("answer")
    if not isinstance(answer, str):
        raise ValueError("no `answers` list ending in a string, nor an `answer` string")
    mode = value.get("mode", TEXT_MODE)
    if mode not in MODES:
        raise ValueError(f"`mode` is {mode!r}, not one of {list(MODES)}")
    sha = value.get("choices_sha")
    return Prediction(value["model"], value["task_id"], value["step"], answer, sha, mode)


def read_predictions(
    files: Iterable[Path],
) -> tuple[dict[PredictionKey, Prediction], list[PredictionProblem]]:
    """Every usable prediction by (model, task, step); the first of repeated keys is kept."""
    found: dict[PredictionKey, Prediction] = {}
    problems: list[PredictionProblem] = []
    for path in files:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    prediction = parse_prediction(orjson.loads(line))
                except (orjson.JSONDecodeError, ValueError) as exc:
                    problems.append(PredictionProblem(path.name, number, str(exc)))
                    continue
                key = prediction.key
                if key in found:
                    problems.append(PredictionProblem(path.name, number, f"repeats {key}"))
                    continue
                found[key] = prediction
    return found, problems


def first_turn(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Turn one of a snapshot row: system and user messages."""
    return orjson.loads(row["prompt_0"])


def second_turn(
    first: list[dict[str, Any]], reply_one: str, row: dict[str, Any]
) -> list[dict[str, Any]]:
    """Turn two: turn one, the model's reply to it, then the multiple-choice question."""
    return [*first, {"role": "assistant", "content": reply_one}, *orjson.loads(row["prompt_1"])]


def ask_two_turns(respond: Responder, row: dict[str, Any], model: str) -> dict[str, Any]:
    """A live model's answers to one snapshot row, as a predictions-file record."""
    first = first_turn(row)
    reply_one = respond(first)
    reply_two = respond(second_turn(first, reply_one, row))
    return {
        "model": model, "task_id": row["task_id"], "step": row["step"],
        "choices_sha": row["choices_sha"], "answers": [reply_one, reply_two],
    }  # fmt: skip


def evaluate_row(
    model: str, row: dict[str, Any], prediction: Prediction | None, mode: str = TEXT_MODE
) -> dict[str, Any]:
    """The `eval_results` row of one model, in one mode, on one snapshot step."""
    result: dict[str, Any] = {
        "model": model, "mode": mode, "task_id": row["task_id"], "step": row["step"],
        "episode_id": row["episode_id"], "dataset": row["dataset"], "split": row["split"],
        "answer": prediction.answer if prediction else None,
        "predicted_label": None, "predicted_id": None, "predicted_op": None,
        "predicted_value": None, "element_correct": None, "op_f1": None,
        "op_token_f1": None, "step_success": None,
    }  # fmt: skip
    if not valid_in(mode, row):
        return {**result, "status": "invalid_step"}
    wrong = {"element_correct": False, "op_f1": 0.0, "op_token_f1": 0.0, "step_success": False}
    if prediction is None:
        return {**result, **wrong, "status": "missing"}
    if prediction.choices_sha is not None and prediction.choices_sha != row["choices_sha"]:
        return {**result, **wrong, "status": "stale"}
    answer = parse_answer(prediction.answer)
    index = label_index(answer.element) if answer.element else None
    ids = row["candidate_ids"]
    chosen = ids[index] if index is not None and index < len(ids) else None
    score = score_step(
        chosen, row["target_ids"], answer.action, answer.value,
        row["target_op"], row["target_op_value"],
    )  # fmt: skip
    return {
        **result,
        "status": "answered" if answer.complete else "unparsed",
        "predicted_label": answer.element,
        "predicted_id": chosen,
        "predicted_op": answer.action,
        "predicted_value": answer.value,
        "element_correct": score.element_correct,
        "op_f1": score.op_f1,
        "op_token_f1": score.op_token_f1,
        "step_success": score.step_success,
    }


def evaluate_rows(
    rows: Iterable[dict[str, Any]], predictions: dict[PredictionKey, Prediction]
) -> Iterator[dict[str, Any]]:
    """One result per (model, mode) named in `predictions` and snapshot row, in name order."""
    runs = sorted({(model, mode) for model, mode, _, _ in predictions})
    for row in rows:
        for model, mode in runs:
            found = predictions.get((model, mode, row["task_id"], row["step"]))
            yield evaluate_row(model, row, found, mode)
