"""Contracts of the benchmark tables: snapshot steps, evaluated answers, the leaderboard."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

OPERATIONS = ("CLICK", "TYPE", "SELECT")
# no_screenshot: the page and its target are there but not the screenshot (MM-Mind2Web~'s rule);
# such a step is still valid in the text-only mode (`text_only_valid`)
INVALID_REASONS = ("no_page", "no_target", "target_not_in_page", "no_screenshot")
# screenshot: turn one carries the step's screenshot (SeeAct's multimodal scheme); text: the
# page's HTML alone, so a text-only model is ranked, and steps without a screenshot count
MODES = ("screenshot", "text")
# answered: parsed and scored; unparsed: no ELEMENT or ACTION could be read (scored as wrong);
# missing: no prediction for the step (scored as wrong); stale: a prediction made on other
# choices (scored as wrong); invalid_step: the step is not valid, so it is not scored.
EVAL_STATUSES = ("answered", "unparsed", "missing", "stale", "invalid_step")


class BenchmarkSnapshotSchema(pa.DataFrameModel):
    """One row per benchmark step: the page, k sampled choices plus the target, two prompts."""

    task_id: str = pa.Field(description="Source id of the task (Mind2Web annotation_id).")
    episode_id: str = pa.Field(description="The standardized episode.")
    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    source: str = pa.Field(description="Dataset the episode belongs to.")
    split: str = pa.Field(nullable=True, description="Source split: train, test_task, ...")
    step: pl.Int32 = pa.Field(ge=0, description="Action number within the task, from 0.")
    action_uid: str = pa.Field(nullable=True, description="Mind2Web id of the action.")
    task_description: str = pa.Field(nullable=True, description="The user's instruction.")
    previous_actions: pl.List(pl.Utf8) = pa.Field(description="Earlier actions, as prompted.")
    prompt_0: str = pa.Field(description="Turn one: system and user messages, JSON chat list.")
    prompt_1: str = pa.Field(description="Turn two (grounding): the user message, JSON list.")
    raw_html: str = pa.Field(nullable=True, description="The page as captured, when there is one.")
    cleaned_html: str = pa.Field(description="The cleaned page shown in turn one (maybe pruned).")
    candidates: pl.List(pl.Utf8) = pa.Field(description="Rendered choices, in label order A, B…")
    candidate_ids: pl.List(pl.Utf8) = pa.Field(description="bnid of each choice, same order.")
    choices_sha: str = pa.Field(description="sha256 of ids and rendered choices.")
    answer_label: str = pa.Field(nullable=True, description="Label of the target choice.")
    none_label: str = pa.Field(description="Label of 'None of the other options…'.")
    target_elements: pl.List(pl.Utf8) = pa.Field(description="Rendered target elements.")
    target_ids: pl.List(pl.Utf8) = pa.Field(description="bnid of every target found in the page.")
    target_op: str = pa.Field(isin=OPERATIONS, description="CLICK, TYPE or SELECT.")
    target_op_value: str = pa.Field(description="Text typed or option selected; empty for CLICK.")
    website: str = pa.Field(nullable=True, description="Website of the task.")
    domain: str = pa.Field(nullable=True, description="Domain category.")
    subdomain: str = pa.Field(nullable=True, description="Sub-domain category.")
    image_sha: str = pa.Field(
        nullable=True,
        str_matches=r"^[0-9a-f]{64}$",
        description="The screenshot shown with turn one: sha256 into `images`.",
    )
    is_valid: bool = pa.Field(
        description="The target is in the cleaned page and the step has its screenshot."
    )
    invalid_reason: str = pa.Field(
        nullable=True, isin=INVALID_REASONS, description="Why the step is not valid."
    )
    text_only_valid: bool = pa.Field(
        description="Valid in the text-only mode: all but the screenshot is there."
    )
    k: pl.Int32 = pa.Field(ge=0, description="Negatives drawn per step (run config).")
    seed: pl.Int64 = pa.Field(description="Seed of the draw (run config).")
    prompt_version: str = pa.Field(description="Version of the prompt templates.")

    class Config:  # pandera reads only options set here, not inherited ones
        name = "benchmark_snapshot"
        strict = True
        coerce = True
        unique = ["task_id", "step"]  # noqa: RUF012 - pandera reads a plain list


# answered: both turns replied (the reply to turn two is scored); failed: a call failed, with
# the reason; deferred: the run's budget ran out before it was asked (the next run asks).
ANSWER_STATUSES = ("answered", "failed", "deferred")


class ModelAnswerSchema(pa.DataFrameModel):
    """One row per (model, mode, step): a live model's replies to the two turns of a step valid
    in that mode."""

    model: str = pa.Field(description="Model that was asked (BIGACTION_LLM_MODEL).")
    mode: str = pa.Field(isin=MODES, description="screenshot (turn one shows it) or text.")
    task_id: str = pa.Field(description="Task of the step.")
    step: pl.Int32 = pa.Field(ge=0, description="Action number within the task.")
    episode_id: str = pa.Field(description="The standardized episode.")
    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    split: str = pa.Field(nullable=True, description="Source split.")
    choices_sha: str = pa.Field(description="The snapshot's hash of the choices it was shown.")
    prompt_version: str = pa.Field(description="Version of the benchmark's prompt templates.")
    status: str = pa.Field(isin=ANSWER_STATUSES, description="answered, failed or deferred.")
    answer_one: str = pa.Field(nullable=True, description="Reply to turn one (the plan).")
    answer_two: str = pa.Field(nullable=True, description="Reply to turn two (the choice).")
    failure_reason: str = pa.Field(nullable=True, description="Why it is not answered.")
    prompt_tokens: pl.Int64 = pa.Field(ge=0, description="Tokens in, both turns.")
    completion_tokens: pl.Int64 = pa.Field(ge=0, description="Tokens out, both turns.")
    cost_usd: pl.Float64 = pa.Field(ge=0, description="Cost from the price table.")

    class Config:  # pandera reads only options set here, not inherited ones
        name = "model_answers"
        strict = True
        coerce = True
        unique = ["model", "mode", "task_id", "step"]  # noqa: RUF012 - pandera reads a plain list


class EvalResultSchema(pa.DataFrameModel):
    """One row per (model, mode, step): the model's answer and its scores."""

    model: str = pa.Field(description="Model name, as the predictions name it.")
    mode: str = pa.Field(isin=MODES, description="screenshot (turn one shows it) or text.")
    task_id: str = pa.Field(description="Task of the step.")
    step: pl.Int32 = pa.Field(ge=0, description="Action number within the task.")
    episode_id: str = pa.Field(description="The standardized episode (what erasure looks for).")
    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    split: str = pa.Field(nullable=True, description="Source split.")
    status: str = pa.Field(isin=EVAL_STATUSES, description="How the answer was scored.")
    answer: str = pa.Field(nullable=True, description="The grounding-turn reply, as given.")
    predicted_label: str = pa.Field(nullable=True, description="ELEMENT as parsed.")
    predicted_id: str = pa.Field(nullable=True, description="bnid of the chosen element.")
    predicted_op: str = pa.Field(nullable=True, description="ACTION as parsed.")
    predicted_value: str = pa.Field(nullable=True, description="VALUE as parsed.")
    element_correct: bool = pa.Field(nullable=True, description="Chose one of the targets.")
    op_f1: pl.Float64 = pa.Field(nullable=True, ge=0, le=1, description="Mind2Web operation F1.")
    op_token_f1: pl.Float64 = pa.Field(
        nullable=True, ge=0, le=1, description="Operation F1 over cl100k_base tokens."
    )
    step_success: bool = pa.Field(nullable=True, description="Element correct and op F1 = 1.")

    class Config:  # pandera reads only options set here, not inherited ones
        name = "eval_results"
        strict = True
        coerce = True
        unique = ["model", "mode", "task_id", "step"]  # noqa: RUF012 - pandera reads a plain list


class LeaderboardSchema(pa.DataFrameModel):
    """One row per (model, mode, split): micro and macro scores over its valid steps."""

    model: str = pa.Field(description="Model name.")
    mode: str = pa.Field(isin=MODES, description="screenshot (turn one shows it) or text.")
    split: str = pa.Field(description="Source split; `all` across splits.")
    steps: pl.Int64 = pa.Field(ge=0, description="Valid steps scored (missing ones included).")
    tasks: pl.Int64 = pa.Field(ge=0, description="Tasks with at least one valid step.")
    invalid_steps: pl.Int64 = pa.Field(ge=0, description="Steps left out: not valid.")
    missing: pl.Int64 = pa.Field(ge=0, description="Valid steps without a prediction.")
    unparsed: pl.Int64 = pa.Field(ge=0, description="Answers with no readable ELEMENT/ACTION.")
    stale: pl.Int64 = pa.Field(ge=0, description="Predictions made on other choices.")
    element_accuracy_micro: pl.Float64 = pa.Field(ge=0, le=1)
    element_accuracy_macro: pl.Float64 = pa.Field(ge=0, le=1)
    op_f1_micro: pl.Float64 = pa.Field(ge=0, le=1)
    op_f1_macro: pl.Float64 = pa.Field(ge=0, le=1)
    op_token_f1_micro: pl.Float64 = pa.Field(ge=0, le=1)
    op_token_f1_macro: pl.Float64 = pa.Field(ge=0, le=1)
    step_success_micro: pl.Float64 = pa.Field(ge=0, le=1)
    step_success_macro: pl.Float64 = pa.Field(ge=0, le=1)
    task_success: pl.Float64 = pa.Field(
        ge=0, le=1, description="Share of tasks all of whose valid steps succeed."
    )

    class Config:  # pandera reads only options set here, not inherited ones
        name = "leaderboard"
        strict = True
        coerce = True
        unique = ["model", "mode", "split"]  # noqa: RUF012 - pandera reads a plain list
