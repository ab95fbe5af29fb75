"""The leaderboard: scores per model and split from evaluated steps, as a table and a chart."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from bigaction_assets.benchmark.metrics import Scored, aggregate

ALL_SPLITS = "all"
COUNTED = ("missing", "unparsed", "stale")
# columns of the Markdown table, with their headings
TABLE = (
    ("model", "model"), ("mode", "mode"), ("split", "split"), ("steps", "steps"),
    ("tasks", "tasks"),
    ("invalid_steps", "invalid"), ("element_accuracy_macro", "elem acc"),
    ("op_f1_macro", "op F1"), ("op_token_f1_macro", "op tok F1"),
    ("step_success_macro", "step SR"), ("step_success_micro", "step SR (micro)"),
    ("task_success", "task SR"),
)  # fmt: skip


def leaderboard_rows(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (model, mode, split), plus `all` per model and mode, from `eval_results`.

    Invalid steps are left out of every score and counted; missing, unparsed and stale
    answers are scored as wrong and counted.
    """
    scored: dict[tuple[str, str, str], list[Scored]] = {}
    counts: dict[tuple[str, str, str], Counter[str]] = {}
    for result in results:
        split = result["split"] or "unknown"
        run = (result["model"], result["mode"])
        for key in ((*run, split), (*run, ALL_SPLITS)):
            counts.setdefault(key, Counter())[result["status"]] += 1
            if result["status"] != "invalid_step":
                scored.setdefault(key, []).append(
                    Scored(
                        task_id=result["task_id"],
                        element_correct=bool(result["element_correct"]),
                        op_f1=result["op_f1"],
                        op_token_f1=result["op_token_f1"],
                        step_success=bool(result["step_success"]),
                    )
                )
    rows = []
    for key in sorted(counts, key=lambda k: (k[0], k[1], k[2] == ALL_SPLITS, k[2])):
        tally = counts[key]
        rows.append(
            {
                "model": key[0],
                "mode": key[1],
                "split": key[2],
                **aggregate(scored.get(key, [])),
                "invalid_steps": tally["invalid_step"],
                **{name: tally[name] for name in COUNTED},
            }
        )
    return rows


def _cell(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def markdown_table(rows: list[dict[str, Any]]) -> str:
    """The leaderboard as Markdown; scores are macro averages unless marked micro."""
    if not rows:
        return "_no evaluated steps_"
    lines = [
        "| " + " | ".join(heading for _, heading in TABLE) + " |",
        "|" + "---|" * len(TABLE),
    ]
    lines += ["| " + " | ".join(_cell(row[c]) for c, _ in TABLE) + " |" for row in rows]
    return "\n".join(lines)
