"""Snapshot rows: one per benchmark step, with its cleaned page, sampled choices and prompts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from bigaction_assets.benchmark.prompts import PROMPT_VERSION, choice_label, step_prompts
from bigaction_assets.benchmark.sampling import sample_choices
from bigaction_assets.benchmark.steps import Step, benchmark_steps
from bigaction_assets.dom import Page, clean_page, render, render_pruned

CANDIDATE_CHARS = 240  # a choice is one element, not a whole section of the page


@dataclass(frozen=True)
class SnapshotSettings:
    k: int = 20
    """Negatives drawn per step (all of them when a step has fewer)."""
    seed: int = 42
    prune_html: bool = True
    """Show the page pruned to the choices (with ancestors and nearby siblings), not whole."""
    siblings: int = 2
    """Nearby siblings kept on each side of a choice when pruning."""


NO_SCREENSHOT = "no_screenshot"


def _text_invalid_reason(step: Step, page: Page | None, html: str | None) -> str | None:
    """Why the step cannot be posed at all, screenshot or not."""
    if html is None:
        return "no_page"
    if not step.targets:
        return "no_target"
    if not any(target in page for target in step.targets):
        return "target_not_in_page"
    return None


def choices_sha(candidate_ids: list[str], candidates: list[str]) -> str:
    """Identifies exactly what a model was shown to choose from, for pinning predictions."""
    return hashlib.sha256(orjson.dumps([candidate_ids, candidates])).hexdigest()


def snapshot_row(
    episode: dict[str, Any], step: Step, pages: dict[str, tuple[str | None, str | None]],
    settings: SnapshotSettings,
) -> dict[str, Any]:  # fmt: skip
    """The benchmark row of one step; `pages` maps html_sha to (raw_html, cleaned_html)."""
    raw_html, source_cleaned = pages.get(step.html_sha or "", (None, None))
    html = raw_html if raw_html is not None else source_cleaned
    page = clean_page(html, keep={*step.targets, *step.negatives}) if html is not None else None
    text_reason = _text_invalid_reason(step, page, html)
    # as MM-Mind2Web~: a step without its screenshot is not a valid multimodal step; it is
    # still posed in full, so the text-only mode can score it
    reason = text_reason or (NO_SCREENSHOT if step.image_sha is None else None)
    targets = [t for t in step.targets if page is not None and t in page]
    positive = targets[0] if text_reason is None else None
    negatives = [n for n in step.negatives if page is not None and n in page and n not in targets]
    task_id = episode["source_id"]
    ids = sample_choices(positive, negatives, settings.k, settings.seed, task_id, step.step)
    choices = [render(page.nodes[i], CANDIDATE_CHARS) for i in ids] if page else []
    if page is None:
        shown = ""
    elif settings.prune_html:
        shown = render_pruned(page, ids, settings.siblings)
    else:
        shown = render(page)
    prompts = step_prompts(episode.get("task") or "", step.previous_actions, shown, choices)
    return {
        "task_id": task_id,
        "episode_id": episode["episode_id"],
        "dataset": episode["dataset"],
        "source": episode["source"],
        "split": episode.get("source_split"),
        "step": step.step,
        "action_uid": step.action_uid,
        "task_description": episode.get("task"),
        "previous_actions": step.previous_actions,
        "prompt_0": orjson.dumps(prompts.turn_one).decode(),
        "prompt_1": orjson.dumps(prompts.turn_two).decode(),
        "raw_html": raw_html,
        "cleaned_html": shown,
        "candidates": choices,
        "candidate_ids": ids,
        "choices_sha": choices_sha(ids, choices),
        "answer_label": choice_label(ids.index(positive)) if positive is not None else None,
        "none_label": choice_label(len(ids)),
        "target_elements": [render(page.nodes[t], CANDIDATE_CHARS) for t in targets],
        "target_ids": targets,
        "target_op": step.op,
        "target_op_value": step.value,
        "website": episode.get("website"),
        "domain": episode.get("domain"),
        "subdomain": episode.get("subdomain"),
        "image_sha": step.image_sha,
        "is_valid": reason is None,
        "invalid_reason": reason,
        "text_only_valid": text_reason is None,
        "k": settings.k,
        "seed": settings.seed,
        "prompt_version": PROMPT_VERSION,
    }


def episode_rows(
    episode: dict[str, Any],
    events: list[dict[str, Any]],
    candidates: list[dict[str, Any]],
    pages: dict[str, tuple[str | None, str | None]],
    settings: SnapshotSettings,
) -> Iterator[dict[str, Any]]:
    """Snapshot rows of every benchmark step of one episode, in step order."""
    for step in sorted(benchmark_steps(episode, events, candidates), key=lambda s: s.step):
        yield snapshot_row(episode, step, pages, settings)
