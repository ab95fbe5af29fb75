"""Step and task metrics of the web benchmark, as Mind2Web and MM-Mind2Web~ define them.

- element accuracy: the chosen element is one of the step's targets;
- operation F1 (Mind2Web): F1 between the *sets* of whitespace tokens of "OP value", predicted
  and true; 1 when both are empty, 0 when only one is;
- operation token F1 (MM-Mind2Web~): the same F1 over cl100k_base tokens of the lower-cased
  strings;
- step success: element correct and operation F1 = 1;
- task success: every evaluated step of the task succeeds.

Micro averages weigh every step alike; macro averages each task's steps first, then the tasks
(what the Mind2Web paper reports).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bigaction_assets.tokens import encoding


def operation_string(op: str | None, value: str | None) -> str:
    """`"TYPE New York"`, `"CLICK"`; empty when there is no operation at all."""
    return " ".join(part for part in ((op or "").strip(), (value or "").strip()) if part)


def set_f1(predicted: set[object], true: set[object]) -> float:
    if not predicted and not true:
        return 1.0
    if not predicted or not true:
        return 0.0
    common = len(predicted & true)
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(true)
    return 2 * precision * recall / (precision + recall)


def operation_f1(predicted: str, true: str) -> float:
    """Mind2Web's operation F1 over whitespace tokens of two "OP value" strings."""
    return set_f1(set(predicted.split()), set(true.split()))


def operation_token_f1(predicted: str, true: str) -> float:
    """MM-Mind2Web~'s operation F1 over cl100k_base tokens of the lower-cased strings."""
    encode = encoding().encode
    return set_f1(
        set(encode(predicted.lower(), disallowed_special=())),
        set(encode(true.lower(), disallowed_special=())),
    )


@dataclass(frozen=True)
class StepScore:
    element_correct: bool
    op_f1: float
    op_token_f1: float

    @property
    def step_success(self) -> bool:
        return self.element_correct and self.op_f1 == 1.0


def score_step(
    chosen: str | None,
    targets: Sequence[str],
    predicted_op: str | None,
    predicted_value: str | None,
    true_op: str,
    true_value: str,
) -> StepScore:
    """Metrics of one answered step; `chosen` is the id of the element picked (None: none)."""
    predicted = operation_string(predicted_op, predicted_value)
    true = operation_string(true_op, true_value)
    return StepScore(
        element_correct=chosen is not None and chosen in targets,
        op_f1=operation_f1(predicted, true),
        op_token_f1=operation_token_f1(predicted, true),
    )


METRICS = ("element_accuracy", "op_f1", "op_token_f1", "step_success")


@dataclass(frozen=True)
class Scored:
    """One evaluated step, as aggregation needs it."""

    task_id: str
    element_correct: bool
    op_f1: float
    op_token_f1: float
    step_success: bool

    def value(self, metric: str) -> float:
        if metric == "element_accuracy":
            return float(self.element_correct)
        return float(getattr(self, metric))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def aggregate(steps: Iterable[Scored]) -> dict[str, float | int]:
    """Micro and macro averages of every metric, task success, and the counts behind them."""
    steps = list(steps)
    by_task: dict[str, list[Scored]] = {}
    for step in steps:
        by_task.setdefault(step.task_id, []).append(step)
    result: dict[str, float | int] = {"steps": len(steps), "tasks": len(by_task)}
    for metric in METRICS:
        result[f"{metric}_micro"] = _mean([s.value(metric) for s in steps])
        result[f"{metric}_macro"] = _mean(
            [_mean([s.value(metric) for s in task]) for task in by_task.values()]
        )
    result["task_success"] = _mean(
        [float(all(s.step_success for s in task)) for task in by_task.values()]
    )
    return result
