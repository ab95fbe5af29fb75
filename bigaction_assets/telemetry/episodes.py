"""A run's landed steps as one standardized episode: the objective as the task, per step a web
observation (URL, viewport, interaction box, page) and its actions (api actions from action
lists, code actions from code) with the chain of thought as their description; engine, LLMs,
success and cost go to the episode's `details`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from bigaction_assets.hashing import page_snapshot
from bigaction_assets.privacy.actions import load_actions
from bigaction_assets.privacy.levels import RANK
from bigaction_assets.privacy.placeholders import renumber
from bigaction_assets.sources.base import RecordRejected

_OBJECTIVE_FIELDS = ("objective", "main_objective")
_TOKEN_SUFFIX, _COST_SUFFIX = "_tokens", "_cost"


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def objective(record: dict[str, Any]) -> str | None:
    for name in _OBJECTIVE_FIELDS:
        if isinstance(record.get(name), str) and record[name]:
            return record[name]
    objectives = record.get("objectives")
    if isinstance(objectives, list) and objectives and isinstance(objectives[0], str):
        return objectives[0]
    return None


def _vision(record: dict[str, Any]) -> tuple[list[float] | None, tuple[int, int] | None]:
    """The step's interaction box as [x, y, width, height] and its viewport (width, height)."""
    box, viewport = record.get("bounding_box"), record.get("viewport_size")
    for entry in record.get("engine_log") or []:
        for vision in entry.get("vision_data") or []:
            box = vision.get("bounding_box") or box
            viewport = vision.get("viewport_size") or viewport
    bbox = None
    if isinstance(box, dict):
        x1, y1, x2, y2 = (float(box[k]) for k in ("x1", "y1", "x2", "y2"))
        bbox = [x1, y1, x2 - x1, y2 - y1]
    if isinstance(viewport, dict):
        viewport = (viewport["width"], viewport["height"])
    return bbox, tuple(viewport) if viewport else None


def _action_list(code: str) -> list[dict[str, Any]] | None:
    """The actions of a YAML or JSON action list (`- actions: [{action: {name, args}}]`)."""
    if not code.strip().startswith(("-", "[")):
        return None
    value = load_actions(code)
    found: list[dict[str, Any]] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            found.append({"name": item["name"], "args": item.get("args") or {}})
        elif isinstance(item, dict):
            for nested in item.values():
                walk(nested)
        elif isinstance(item, list):
            for nested in item:
                walk(nested)

    walk(value)
    return found or None


def _actions(record: dict[str, Any], thought: str | None) -> list[dict[str, Any]]:
    code = record.get("code")
    actions: list[dict[str, Any]] = []
    listed = _action_list(code) if isinstance(code, str) else None
    if listed:
        for item in listed:
            kwargs = _json(item["args"])
            actions.append({"kind": "api_action", "function": item["name"], "kwargs": kwargs})
    elif isinstance(code, str) and code.strip():
        actions.append({"kind": "code_action", "language": "python", "content": code})
    else:  # LOW keeps only the names of the actions taken
        for name in record.get("action_names") or []:
            actions.append({"kind": "api_action", "function": name, "kwargs": None})
    for action in actions:
        action["actor"] = "agent"
    if actions:
        actions[0]["description"] = thought
    return actions


def step_events(envelope: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The events of one step, and its page snapshot when the level kept the HTML."""
    record = envelope["record"]
    bbox, viewport = _vision(record)
    page = page_snapshot(record["html"], None) if isinstance(record.get("html"), str) else None
    observation = {
        "kind": "web_observation", "actor": "environment", "url": record.get("url"),
        "html_sha": page["html_sha"] if page else None, "bbox": bbox,
        "viewport_width": viewport[0] if viewport else None,
        "viewport_height": viewport[1] if viewport else None,
        "extra": _json({"step": envelope["step"], "tab_info": record.get("tab_info")}),
    }  # fmt: skip
    details = {k: record.get(k) for k in ("engine", "instruction", "success", "total_step_cost")}
    events = [observation]
    for action in _actions(record, record.get("world_model_output")):
        events.append({**action, "extra": _json({"step": envelope["step"], **details})})
    if record.get("output") not in (None, ""):
        output = record["output"]
        content = output if isinstance(output, str) else _json(output)
        events.append({"kind": "message_action", "actor": "agent", "content": content})
    return events, page


def _llms(record: dict[str, Any]) -> set[str]:
    names = {record.get("llm"), record.get("multi_modal_model")}
    for entry in record.get("engine_log") or []:
        for outcome in entry.get("action_outcomes") or []:
            names.add(outcome.get("navigation_engine_llm"))
    return {name for name in names if isinstance(name, str) and name}


def _costs(records: list[dict[str, Any]]) -> dict[str, float]:
    totals: Counter[str] = Counter()
    for record in records:
        for name, value in record.items():
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if numeric and name.endswith((_TOKEN_SUFFIX, _COST_SUFFIX)):
                totals[name] += value
    # a sum of integers can pass 64 bits, which JSON writers refuse: such a total is a float
    return {
        name: round(value, 8) if -(2**63) <= value < 2**63 else float(value)
        for name, value in sorted(totals.items())
    }


def _last(records: list[dict[str, Any]], name: str) -> Any:
    return next((r[name] for r in reversed(records) if r.get(name) is not None), None)


def run_episode(
    day: str, run: str, envelopes: list[dict[str, Any]], renumbered: bool = True
) -> dict[str, Any]:
    """Episode row fields, event rows and pages for one run's steps on one day.

    Steps are ordered by their number; a step sent twice (a client retry) is kept once.
    Placeholders are renumbered `<KIND_1>`, `<KIND_2>` in order of first appearance; without
    `renumbered` they are left keyed (text inside strings only: the collector's storage check
    skips that pass, half its cost).
    """
    by_step: dict[int, dict[str, Any]] = {}
    for envelope in envelopes:
        if not isinstance(envelope.get("record"), dict) or not isinstance(
            envelope.get("step"), int
        ):
            detail = "a telemetry line needs an object `record` and an integer `step`"
            raise RecordRejected("wrong_type", detail)
        by_step.setdefault(envelope["step"], envelope)
    mapping: dict[str, str] = {}
    ordinals: Counter[str] = Counter()
    steps = [by_step[step] for step in sorted(by_step)]
    if renumbered:
        steps = [renumber(step, mapping, ordinals) for step in steps]
    records = [step["record"] for step in steps]
    task = next((objective(r) for r in records if objective(r)), None)
    events: list[dict[str, Any]] = []
    if task:
        events.append({"kind": "text_observation", "actor": "user", "content": task})
    pages = []
    for step in steps:
        step_rows, page = step_events(step)
        events += step_rows
        if page is not None:
            pages.append(page)
    scrubbed: Counter[str] = Counter()
    for step in steps:
        scrubbed.update(step.get("scrubbed") or {})
    details = {
        "origin": records[0].get("origin"), "version": records[0].get("version"),
        "level": min((s["level"] for s in steps), key=RANK.__getitem__),
        "engines": dict(Counter(r["engine"] for r in records if r.get("engine"))),
        "llms": sorted(set().union(*(_llms(r) for r in records))),
        "success": _last(records, "success"),
        "cost": _costs(records), "steps": len(steps),
        "duplicate_steps": len(envelopes) - len(steps),
        "first_step_date": records[0].get("date"), "scrubbed": dict(sorted(scrubbed.items())),
        "dev_key": any(s.get("dev_key") for s in steps),
    }  # fmt: skip
    return {"task": task, "details": _json(details), "events": events, "pages": pages}
