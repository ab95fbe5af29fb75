"""A live model through the benchmark's two turns, via the durable LLM cache and its budget.

Every snapshot step valid in the run's mode is asked turn one (system and user messages with the
page; in `screenshot` mode the user message also carries the step's screenshot, from the lake, as
an `image_url` part), then turn two (the multiple choice) after the model's own reply; both calls
go through the cache, keyed on the screenshot's hash, so a rerun asks nothing again. The replies
become `model_answers` rows, which `eval_results` scores exactly as it scores a predictions file.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bigaction_assets.benchmark.evaluate import (
    Prediction,
    PredictionKey,
    first_turn,
    second_turn,
    valid_in,
)
from bigaction_assets.benchmark.inputs import snapshot_rows
from bigaction_assets.benchmark.prompts import PROMPT_VERSION, with_screenshot
from bigaction_assets.images.store import iter_images
from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import read_arrow
from bigaction_assets.llm.cache import CacheLocation
from bigaction_assets.llm.caller import CachedCaller, CallRequest, Job, Outcome, RunStats
from bigaction_assets.llm.session import LLMConfig, run_calls

SNAPSHOT_COLUMNS = [
    "task_id", "step", "episode_id", "dataset", "split", "is_valid", "text_only_valid",
    "image_sha", "choices_sha", "prompt_0", "prompt_1",
]  # fmt: skip
SCREENSHOT_MODE = "screenshot"
# Steps whose screenshots are read from the lake together: one pass over `images` per batch,
# and at most this many screenshots in memory besides the calls in flight.
STEPS_PER_IMAGE_READ = 64
SCREENSHOT_NOT_IN_LAKE = "screenshot_not_in_lake"
Shots = dict[str, tuple[bytes, str]]  # image_sha -> (bytes, format)


@dataclass
class LiveRun:
    """The run's stats, one row per valid step in snapshot order, and steps left out."""

    stats: RunStats
    rows: list[dict[str, Any]] = field(default_factory=list)
    invalid_steps: int = 0


def screenshots(lake: Lake, key: str, rows: list[dict[str, Any]]) -> Shots:
    """The screenshots of `rows` from the partition's `images`, by hash."""
    wanted = {row["image_sha"] for row in rows if row["image_sha"]}
    if not wanted:
        return {}
    found = iter_images(lake, wanted, partitions=[key])
    return {image["image_sha"]: (image["bytes"], image["format"]) for image in found}


def ask_live_model(
    lake: Lake,
    key: str,
    config: LLMConfig,
    cache_path: CacheLocation,
    run_id: str,
    mode: str = SCREENSHOT_MODE,
) -> LiveRun:
    """Both turns of every step of the partition's snapshot valid in `mode`, asked of
    `config`'s model; in `screenshot` mode turn one carries the step's screenshot."""
    slots: list[dict[str, Any] | None] = []
    invalid = 0

    def job(caller: CachedCaller, row: dict[str, Any], shots: Shots, slot: int) -> Job:
        async def run() -> None:
            subjects = (str(row["episode_id"]),)
            first = first_turn(row)
            if mode == SCREENSHOT_MODE:
                if row["image_sha"] not in shots:  # the snapshot names one the lake lost
                    slots[slot] = unasked_row(caller.model, mode, row, SCREENSHOT_NOT_IN_LAKE)
                    return
                first = with_screenshot(first, *shots[row["image_sha"]])
            one = await caller.call(CallRequest(first, subjects))
            two = None
            if one.status == "ok":
                second = second_turn(first, one.output or "", row)
                two = await caller.call(CallRequest(second, subjects))
            slots[slot] = answer_row(caller, mode, row, one, two)

        return run

    def jobs(caller: CachedCaller) -> Iterator[Job]:
        nonlocal invalid
        batch: list[dict[str, Any]] = []

        def flush() -> Iterator[Job]:
            shots = screenshots(lake, key, batch) if mode == SCREENSHOT_MODE else {}
            for row in batch:
                slots.append(None)
                yield job(caller, row, shots, len(slots) - 1)
            batch.clear()

        for row in snapshot_rows(lake, key, SNAPSHOT_COLUMNS):
            if not valid_in(mode, row):
                invalid += 1
                continue
            batch.append(row)
            if len(batch) >= STEPS_PER_IMAGE_READ:
                yield from flush()
        yield from flush()

    stats = run_calls(config, cache_path, run_id, jobs)
    return LiveRun(stats, [row for row in slots if row is not None], invalid)


def unasked_row(model: str, mode: str, row: dict[str, Any], reason: str) -> dict[str, Any]:
    """A step that could not be asked: failed with its reason, nothing spent."""
    return {
        **_step_columns(model, mode, row), "status": "failed", "answer_one": None,
        "answer_two": None, "failure_reason": reason, "prompt_tokens": 0,
        "completion_tokens": 0, "cost_usd": 0.0,
    }  # fmt: skip


def _step_columns(model: str, mode: str, row: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": model, "mode": mode, "task_id": row["task_id"], "step": row["step"],
        "episode_id": row["episode_id"], "dataset": row["dataset"], "split": row["split"],
        "choices_sha": row["choices_sha"], "prompt_version": PROMPT_VERSION,
    }  # fmt: skip


def answer_row(
    caller: CachedCaller, mode: str, row: dict[str, Any], one: Outcome, two: Outcome | None
) -> dict[str, Any]:
    """The `model_answers` row of one step from its two calls (two is None if one failed)."""
    outcomes = [outcome for outcome in (one, two) if outcome is not None]
    calls = [caller.cache.get(outcome.key) for outcome in outcomes]
    last = outcomes[-1]
    answered = two is not None and two.status == "ok"
    return {
        **_step_columns(caller.model, mode, row),
        "status": "answered" if answered else last.status,
        "answer_one": one.output, "answer_two": two.output if two is not None else None,
        "failure_reason": None if answered else last.reason,
        "prompt_tokens": sum(c.prompt_tokens for c in calls if c is not None),
        "completion_tokens": sum(c.completion_tokens for c in calls if c is not None),
        "cost_usd": sum(c.cost_usd for c in calls if c is not None),
    }  # fmt: skip


def kept_answers(lake: Lake, key: str, model: str, mode: str) -> list[dict[str, Any]]:
    """Rows of other models (or of this one in the other mode) already in the partition: each
    keeps its answers when another is run, so the leaderboard ranks them side by side."""
    if not partition_exists(lake, "benchmark", "model_answers", key):
        return []
    rows = read_arrow(lake, "benchmark", "model_answers", key).to_pylist()
    return [row for row in rows if (row["model"], row.get("mode")) != (model, mode)]


def live_predictions(lake: Lake, key: str) -> dict[PredictionKey, Prediction]:
    """Every answered step of the partition's `model_answers`, as predictions to score."""
    if not partition_exists(lake, "benchmark", "model_answers", key):
        return {}
    columns = ["model", "mode", "task_id", "step", "status", "answer_two", "choices_sha"]
    table = read_arrow(lake, "benchmark", "model_answers", key, columns)
    found = (
        Prediction(
            row["model"], row["task_id"], row["step"], row["answer_two"], row["choices_sha"],
            row["mode"],
        )
        for row in table.to_pylist()
        if row["status"] == "answered"
    )  # fmt: skip
    return {prediction.key: prediction for prediction in found}
