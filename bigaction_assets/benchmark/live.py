"""A live model through the benchmark's two turns, via the durable LLM cache and its budget.

Every valid snapshot step is asked turn one (system and user messages with the page), then turn
two (the multiple choice) after the model's own reply; both calls go through the cache, so a
rerun asks nothing again. The replies become `model_answers` rows, which `eval_results` scores
exactly as it scores a predictions file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bigaction_assets.benchmark.evaluate import Prediction, PredictionKey, first_turn, second_turn
from bigaction_assets.benchmark.inputs import snapshot_rows
from bigaction_assets.benchmark.prompts import PROMPT_VERSION
from bigaction_assets.lake import Lake, partition_exists, read_arrow
from bigaction_assets.llm.cache import CacheLocation
from bigaction_assets.llm.caller import CachedCaller, CallRequest, Job, Outcome, RunStats
from bigaction_assets.llm.session import LLMConfig, run_calls

SNAPSHOT_COLUMNS = [
    "task_id", "step", "episode_id", "dataset", "split", "is_valid", "choices_sha", "prompt_0",
    "prompt_1",
]  # fmt: skip


@dataclass
class LiveRun:
    """The run's stats, one row per valid step in snapshot order, and steps left out."""

    stats: RunStats
    rows: list[dict[str, Any]] = field(default_factory=list)
    invalid_steps: int = 0


def ask_live_model(
    lake: Lake, key: str, config: LLMConfig, cache_path: CacheLocation, run_id: str
) -> LiveRun:
    """Both turns of every valid step of the partition's snapshot, asked of `config`'s model."""
    slots: list[dict[str, Any] | None] = []
    invalid = 0

    def job(caller: CachedCaller, row: dict[str, Any], slot: int) -> Job:
        async def run() -> None:
            subjects = (str(row["episode_id"]),)
            first = first_turn(row)
            one = await caller.call(CallRequest(first, subjects))
            two = None
            if one.status == "ok":
                second = second_turn(first, one.output or "", row)
                two = await caller.call(CallRequest(second, subjects))
            slots[slot] = answer_row(caller, row, one, two)

        return run

    def jobs(caller: CachedCaller) -> Iterator[Job]:
        nonlocal invalid
        for row in snapshot_rows(lake, key, SNAPSHOT_COLUMNS):
            if not row["is_valid"]:
                invalid += 1
                continue
            slots.append(None)
            yield job(caller, row, len(slots) - 1)

    stats = run_calls(config, cache_path, run_id, jobs)
    return LiveRun(stats, [row for row in slots if row is not None], invalid)


def answer_row(
    caller: CachedCaller, row: dict[str, Any], one: Outcome, two: Outcome | None
) -> dict[str, Any]:
    """The `model_answers` row of one step from its two calls (two is None if one failed)."""
    outcomes = [outcome for outcome in (one, two) if outcome is not None]
    calls = [caller.cache.get(outcome.key) for outcome in outcomes]
    last = outcomes[-1]
    answered = two is not None and two.status == "ok"
    return {
        "model": caller.model, "task_id": row["task_id"], "step": row["step"],
        "episode_id": row["episode_id"], "dataset": row["dataset"], "split": row["split"],
        "choices_sha": row["choices_sha"], "prompt_version": PROMPT_VERSION,
        "status": "answered" if answered else last.status,
        "answer_one": one.output, "answer_two": two.output if two is not None else None,
        "failure_reason": None if answered else last.reason,
        "prompt_tokens": sum(c.prompt_tokens for c in calls if c is not None),
        "completion_tokens": sum(c.completion_tokens for c in calls if c is not None),
        "cost_usd": sum(c.cost_usd for c in calls if c is not None),
    }  # fmt: skip


def kept_answers(lake: Lake, key: str, model: str) -> list[dict[str, Any]]:
    """Rows of other models already in the partition: each live model keeps its answers when
    another is run, so the leaderboard ranks them side by side."""
    if not partition_exists(lake, "benchmark", "model_answers", key):
        return []
    rows = read_arrow(lake, "benchmark", "model_answers", key).to_pylist()
    return [row for row in rows if row["model"] != model]


def live_predictions(lake: Lake, key: str) -> dict[PredictionKey, Prediction]:
    """Every answered step of the partition's `model_answers`, as predictions to score."""
    if not partition_exists(lake, "benchmark", "model_answers", key):
        return {}
    columns = ["model", "task_id", "step", "status", "answer_two", "choices_sha"]
    table = read_arrow(lake, "benchmark", "model_answers", key, columns)
    return {
        (row["model"], row["task_id"], row["step"]): Prediction(
            row["model"], row["task_id"], row["step"], row["answer_two"], row["choices_sha"]
        )
        for row in table.to_pylist()
        if row["status"] == "answered"
    }
