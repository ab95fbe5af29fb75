"""The app's labels as `annotations` rows, and the ratings Fleiss' kappa is computed on."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from bigaction_assets.annotate.labels import PROACTIVE_TURN, WEB_STEP, WEB_VERDICTS
from bigaction_assets.reward.agreement import kappa_summary


def annotation_rows(labels: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """One row per (item, annotator) from `AnnotationStore.export_labels`; annotators appear
    by an opaque id, never by name."""
    for row in labels:
        label = row["label"]
        accepted = label.get("accepted_tasks")
        if row["kind"] == WEB_STEP:
            verdict = label["verdict"]
        else:
            verdict = "accepted_tasks" if accepted else "rejected_all"
        annotator = f"a{row['user_id']}"
        yield {
            "annotation_id": f"{row['item_id']}@{annotator}", "item_id": row["item_id"],
            "item_kind": row["kind"], "episode_id": row["episode_id"], "annotator_id": annotator,
            "verdict": verdict, "accepted_tasks": accepted,
            "help_needed": label.get("help_needed"), "revision": row["revision"],
            "labelled_at": row["created_at"], "updated_at": row["updated_at"],
        }  # fmt: skip


def agreement(
    rows: Iterable[Mapping[str, Any]], candidates: Mapping[str, int]
) -> dict[str, dict[str, float | int | None]]:
    """Fleiss' kappa per kind of judgement: web-step verdicts, each candidate task's
    accept/reject, and the help-needed answer of proactive turns.

    Args:
        candidates: number of candidate tasks per proactive item id.
    """
    web: list[tuple[str, str]] = []
    tasks: list[tuple[tuple[str, int], bool]] = []
    help_needed: list[tuple[str, bool]] = []
    for row in rows:
        if row["item_kind"] == WEB_STEP:
            web.append((row["item_id"], row["verdict"]))
        elif row["item_kind"] == PROACTIVE_TURN:
            accepted = set(row["accepted_tasks"] or ())
            for k in range(candidates.get(row["item_id"], 0)):
                tasks.append(((row["item_id"], k), k in accepted))
            help_needed.append((row["item_id"], bool(row["help_needed"])))
    return {
        "web_step": dict(kappa_summary(web, WEB_VERDICTS)),
        "proactive_task": dict(kappa_summary(tasks, (True, False))),
        "proactive_help": dict(kappa_summary(help_needed, (True, False))),
    }
