"""Writes the bundled demo predictions: two simulated models answering every snapshot step.

    .venv/bin/python benchmarks/demo_predictions.py data/lake landing/predictions/demo.jsonl

Nothing here is a real model. `demo-careful` picks the right element about 85% of the time and
words its answers cleanly; `demo-hasty` is right about half the time, sometimes gives up ("none
of the others"), writes its answers with markdown and periods, and once in a while forgets the
answer format altogether (an unparsed answer). Every draw is a hash of (model, task, step), so
the file is the same on every run over the same snapshot.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

MODELS = {"demo-careful": 0.85, "demo-hasty": 0.5}


def draw(*parts: object) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def turn_one(row: dict, choice: str) -> str:
    op, value = row["target_op"], row["target_op_value"]
    doing = {"TYPE": f'type "{value}" into', "SELECT": f'select "{value}" in'}.get(op, "click")
    return (
        f'The page is part of the task "{row["task_description"]}". '
        f"{len(row['previous_actions'])} action(s) were taken so far. "
        f"The next step is to {doing} the element {choice[:80]}."
    )


def answer(model: str, row: dict) -> list[str]:
    skill = MODELS[model]
    labels = [chr(ord("A") + i) if i < 26 else "A" + chr(ord("A") + i - 26) for i in range(30)]
    right = row["answer_label"] or row["none_label"]
    wrong = [labels[i] for i in range(len(row["candidates"])) if labels[i] != right]
    roll = draw(model, row["task_id"], row["step"])
    if roll < skill or not wrong:
        label = right
    elif model == "demo-hasty" and roll > 0.92:
        label = row["none_label"]
    else:
        label = wrong[int(draw(model, "wrong", row["task_id"], row["step"]) * len(wrong))]
    op, value = row["target_op"], row["target_op_value"]
    if draw(model, "op", row["task_id"], row["step"]) > skill + 0.1:
        op, value = ("CLICK", "") if op != "CLICK" else ("TYPE", "search")
    choice = row["candidates"][labels.index(label)] if label != row["none_label"] else "none"
    first = turn_one(row, choice)
    shown = value or "None"
    if model == "demo-careful":
        second = f"I will act on {choice[:60]}.\n\nELEMENT: {label}\nACTION: {op}\nVALUE: {shown}"
    elif draw(model, "format", row["task_id"], row["step"]) < 0.1:
        second = f"The right element is probably option {label}; I would {op.lower()} it."
    else:
        second = f"**ELEMENT:** ({label}).\n**ACTION:** {op.title()}.\n**VALUE:** {shown}."
    return [first, second]


def main(lake: Path, out: Path) -> int:
    rows = []
    for path in sorted((lake / "benchmark" / "benchmark_snapshot").glob("*.parquet")):
        rows += pq.read_table(path, columns=[
            "task_id", "step", "task_description", "previous_actions", "candidates",
            "choices_sha", "answer_label", "none_label", "target_op", "target_op_value",
        ]).to_pylist()  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        for model in MODELS:
            for row in sorted(rows, key=lambda r: (r["task_id"], r["step"])):
                record = {
                    "model": model, "task_id": row["task_id"], "step": row["step"],
                    "choices_sha": row["choices_sha"], "answers": answer(model, row),
                }  # fmt: skip
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows) * len(MODELS)} predictions to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
