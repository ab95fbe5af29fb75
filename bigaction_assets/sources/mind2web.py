"""Mind2Web: the original task JSON, and the one-step-per-row form SeeAct's examples use.

A task becomes one episode: the instruction as a user text observation, then per action a web
observation (its page, stored once in `dom_snapshots`) and the api action taken on the target
element. Every candidate element of every step goes to `web_candidates` for the benchmark.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from bigaction_assets.hashing import page_snapshot
from bigaction_assets.sources.base import (
    LandingFilesAdapter,
    ParsedRecord,
    RecordRejected,
    Rejection,
    StandardRecord,
)

SOURCE = "mind2web"
SPLITS = ("train", "test_task", "test_website", "test_domain")
OPERATIONS = {"CLICK": "click", "TYPE": "type", "SELECT": "select_option"}
ORIGINAL_OPS = ("CLICK", "TYPE", "SELECT", "HOVER", "ENTER")
# the argument that carries the operation's value, per function (BrowserGym's names)
VALUE_ARGUMENT = {"type": "text", "select_option": "options"}
_BOUNDING_BOX = re.compile(r'"bounding_box_rect"\s*:\s*"([^"]*)"')
_TASK_FIELDS = ("annotation_id", "confirmed_task", "actions")
_ACTION_FIELDS = ("action_uid", "operation", "pos_candidates", "neg_candidates")


class Mind2WebAdapter(LandingFilesAdapter):
    name = "mind2web"
    description = "Mind2Web raw tasks (JSON array of tasks) or SeeAct-style step rows (JSONL)."
    source = SOURCE

    def record_id(self, value: Any) -> str | None:
        """A task's annotation_id; a step row's action_uid (a task spans several rows)."""
        if not isinstance(value, dict):
            return None
        key = "action_uid" if "actions" not in value and "operation" in value else "annotation_id"
        return value[key] if isinstance(value.get(key), str) else None

    def redistributable(self, dataset: str) -> bool:
        """Only the train split: Mind2Web asks that its test sets never be redistributed (so
        they stay out of training data); a dataset of unknown split is treated like one."""
        return dataset_split(dataset) == "train"

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection]:
        split = dataset_split(dataset)
        pending: list[ParsedRecord] = []  # consecutive step rows of one task
        for record in records:
            value = record.value
            if isinstance(value, dict) and "actions" not in value and "operation" in value:
                if pending and pending[0].value.get("annotation_id") != value.get("annotation_id"):
                    yield from _task_from_steps(pending, split)
                    pending = []
                pending.append(record)
                continue
            if pending:
                yield from _task_from_steps(pending, split)
                pending = []
            yield _guard(record, lambda r=record: import_task(r.value, split))
        if pending:
            yield from _task_from_steps(pending, split)


def dataset_split(dataset: str) -> str | None:
    """Mind2Web names its files by split (`train_0`, `test_website_3`); so do our datasets."""
    for split in sorted(SPLITS, key=len, reverse=True):
        if dataset == split or dataset.startswith(split + "_"):
            return split
    return None


def _guard(record: ParsedRecord, build: Any) -> StandardRecord | Rejection:
    try:
        standard = build()
    except RecordRejected as exc:
        return Rejection(record, exc.reason, exc.detail)
    standard.origin = record
    return standard


def _require(value: Any, fields: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordRejected("wrong_type", f"{where} is {type(value).__name__}, not an object")
    for key in fields:
        if key not in value:
            raise RecordRejected("missing_field", f"{where} has no `{key}`")
    return value


def _typed(value: Any, kind: type | tuple[type, ...], where: str) -> Any:
    """`value` if it is None or of `kind` (a bool is not a number here)."""
    if value is None or (isinstance(value, kind) and (kind is bool or not isinstance(value, bool))):
        return value
    raise RecordRejected("wrong_type", f"{where} has a {type(value).__name__} where {kind} belongs")


def _text(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise RecordRejected("wrong_type", f"{where} is {type(value).__name__}, not a string")


def import_task(task: Any, split: str | None) -> StandardRecord:
    """One raw Mind2Web task as an episode with its events, pages and candidates."""
    task = _require(task, _TASK_FIELDS, "task")
    actions = task["actions"]
    if not isinstance(actions, list):
        raise RecordRejected("wrong_type", "task.actions is not a list")
    reprs = task.get("action_reprs") or []
    if not isinstance(reprs, list):
        raise RecordRejected("wrong_type", "task.action_reprs is not a list")
    steps = [
        (step, action, reprs[step] if step < len(reprs) else None)
        for step, action in enumerate(actions)
    ]
    return _build(task, steps, split, {"action_reprs": reprs})


def _task_from_steps(
    rows: list[ParsedRecord], split: str | None
) -> Iterator[StandardRecord | Rejection]:
    """Step rows of one task (SeeAct's form): the step number is the count of previous actions."""

    def build() -> StandardRecord:
        steps = []
        for row in rows:
            value = _require(
                row.value, ("annotation_id", "confirmed_task", *_ACTION_FIELDS), "step row"
            )
            previous = value.get("previous_actions") or []
            if not isinstance(previous, list):
                raise RecordRejected("wrong_type", "step row previous_actions is not a list")
            steps.append((len(previous), value, None))
        steps.sort(key=lambda step: step[0])
        first = rows[0].value
        previous_actions = first.get("previous_actions") or []
        return _build(
            first, steps, split, {"format": "step_rows", "previous_actions": previous_actions}
        )

    result = _guard(rows[0], build)
    if isinstance(result, Rejection):
        yield from (Rejection(row, result.reason, result.detail) for row in rows)
    else:
        yield result


def _build(
    task: dict[str, Any],
    steps: list[tuple[int, Any, str | None]],
    split: str | None,
    details: dict[str, Any],
) -> StandardRecord:
    annotation_id = _text(task["annotation_id"], "task.annotation_id")
    instruction = _text(task["confirmed_task"], "task.confirmed_task")
    if not annotation_id:
        raise RecordRejected("missing_field", "task.annotation_id is empty")
    events: list[dict[str, Any]] = [
        {"kind": "text_observation", "actor": "user", "content": instruction}
    ]
    snapshots: dict[str, dict[str, Any]] = {}
    candidates: list[dict[str, Any]] = []
    for step, action, action_repr in steps:
        where = f"actions[{step}]"
        action = _require(action, _ACTION_FIELDS, where)
        observation, snapshot = _observation(action, step, where)
        if snapshot is not None:
            snapshots.setdefault(snapshot["html_sha"], snapshot)
        step_candidates = _candidates(action, step, where)
        candidates.extend(step_candidates)
        events.append(observation)
        events.append(_action(action, step, action_repr, step_candidates, where))
    episode = {
        "source": SOURCE,
        "source_format": "mind2web",
        "source_split": split,
        "source_id": annotation_id,
        "task": instruction,
        "website": _text(task.get("website"), "task.website"),
        "domain": _text(task.get("domain"), "task.domain"),
        "subdomain": _text(task.get("subdomain"), "task.subdomain"),
        "details": orjson.dumps(details).decode(),
    }
    return StandardRecord(episode, events, list(snapshots.values()), candidates)


def _observation(
    action: dict[str, Any], step: int, where: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    raw_html = _text(action.get("raw_html"), f"{where}.raw_html")
    cleaned_html = _text(action.get("cleaned_html"), f"{where}.cleaned_html")
    snapshot = page_snapshot(raw_html, cleaned_html)
    event: dict[str, Any] = {
        "kind": "web_observation",
        "actor": "environment",
        "html_sha": snapshot["html_sha"] if snapshot else None,
        "extra": orjson.dumps({"step": step, "action_uid": action["action_uid"]}).decode(),
    }
    return event, snapshot


def _action(
    action: dict[str, Any],
    step: int,
    action_repr: str | None,
    candidates: list[dict[str, Any]],
    where: str,
) -> dict[str, Any]:
    operation = _require(action["operation"], ("op",), f"{where}.operation")
    op = operation["op"]
    if op not in OPERATIONS:
        raise RecordRejected(
            "invalid_value", f"{where}.operation.op is {op!r}, not one of {sorted(OPERATIONS)}"
        )
    original_op = operation.get("original_op") or op
    if original_op not in ORIGINAL_OPS:
        raise RecordRejected("invalid_value", f"{where}.operation.original_op is {original_op!r}")
    value = _text(operation.get("value"), f"{where}.operation.value") or ""
    function = OPERATIONS[op]
    target = _target(action, candidates)
    kwargs: dict[str, Any] = {"bid": target["backend_node_id"] if target else None}
    if function in VALUE_ARGUMENT:
        kwargs[VALUE_ARGUMENT[function]] = value
    extra = {
        "step": step,
        "action_uid": action["action_uid"],
        "op": op,
        "original_op": original_op,
        "value": value,
        "action_repr": action_repr,
        "target_found_by": target["found_by"] if target else None,
    }
    return {
        "kind": "api_action",
        "actor": "agent",
        "function": function,
        "kwargs": orjson.dumps(kwargs).decode(),
        "bbox": target.get("bbox") if target else None,
        "extra": orjson.dumps(extra).decode(),
    }


def _target(action: dict[str, Any], candidates: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The acted-on element: the original target among positives, else the page's marker."""
    positives = [c for c in candidates if c["positive"]]
    positives.sort(key=lambda c: not c.get("is_original_target"))
    if positives:
        return {**positives[0], "found_by": "pos_candidates"}
    node = find_marked_node(action.get("raw_html") or "", str(action["action_uid"]))
    if node is not None:
        return {"backend_node_id": node, "bbox": None, "found_by": "raw_html_marker"}
    return None


def find_marked_node(raw_html: str, action_uid: str) -> str | None:
    """backend_node_id of the element Mind2Web marked with `data_pw_testid_buckeye=<uid>`."""
    marker = f'data_pw_testid_buckeye="{action_uid}"'
    at = raw_html.find(marker)
    if at < 0:
        return None
    tag_start = raw_html.rfind("<", 0, at)
    tag_end = raw_html.find(">", at)
    found = re.search(r'backend_node_id="([^"]+)"', raw_html[tag_start:tag_end])
    return found.group(1) if found else None


def _candidates(action: dict[str, Any], step: int, where: str) -> list[dict[str, Any]]:
    rows = []
    for key, positive in (("pos_candidates", True), ("neg_candidates", False)):
        listed = action[key]
        if not isinstance(listed, list):
            raise RecordRejected("wrong_type", f"{where}.{key} is not a list")
        for position, candidate in enumerate(listed):
            rows.append(
                _candidate(
                    candidate, step, action["action_uid"], positive, f"{where}.{key}[{position}]"
                )
            )
    return rows


def _candidate(
    candidate: Any, step: int, action_uid: str, positive: bool, where: str
) -> dict[str, Any]:
    candidate = _require(candidate, ("backend_node_id",), where)
    attributes = candidate.get("attributes")
    if attributes is not None and not isinstance(attributes, str):
        attributes = orjson.dumps(attributes).decode()
    return {
        "step": step,
        "action_uid": action_uid,
        "backend_node_id": str(candidate["backend_node_id"]),
        "tag": _text(candidate.get("tag"), f"{where}.tag"),
        "attributes": attributes,
        "positive": positive,
        "is_original_target": _typed(candidate.get("is_original_target"), bool, where),
        "is_top_level_target": _typed(candidate.get("is_top_level_target"), bool, where),
        "bbox": parse_bounding_box(attributes),
        "rank": _typed(candidate.get("rank"), int, where),
        "score": _typed(candidate.get("score"), (int, float), where),
    }


def parse_bounding_box(attributes: str | None) -> list[float] | None:
    """`bounding_box_rect` "x,y,w,h" from a candidate's attribute JSON, as four floats."""
    if not attributes:
        return None
    found = _BOUNDING_BOX.search(attributes)  # a regex: candidates number in the hundreds per step
    if found is None:
        return None
    try:
        values = [float(part) for part in found.group(1).split(",")]
    except ValueError:
        return None
    return values if len(values) == 4 else None


ADAPTER = Mind2WebAdapter()
