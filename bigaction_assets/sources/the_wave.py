"""the-wave (BigAction's dataset): one page and one grounded action per row, as a one-step episode.

A row holds `query` (the user's instruction), `url`, `html` (the page), `selenium_ground_truth`
(the Selenium code that performs the action) and `ground_truth_outer_html` (the target element
as captured). The target is the page element matching that outer HTML (`dom.match`); the
operation and its value come from the Selenium call. Every interactive element of the page is a
candidate, so the rows flow into the benchmark like Mind2Web's. A target not found in the page
keeps its episode, with no target: the snapshot marks that step invalid and says why.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

import orjson

from bigaction_assets.dom.match import find_outer_html, interactive_elements
from bigaction_assets.hashing import page_snapshot
from bigaction_assets.sources.base import (
    LandingFilesAdapter,
    ParsedRecord,
    RecordRejected,
    Rejection,
    StandardRecord,
)

SOURCE = "the-wave"
FIELDS = ("query", "url", "html", "selenium_ground_truth", "ground_truth_outer_html")
SPLITS = ("train", "validation", "test")
FUNCTIONS = {"CLICK": "click", "TYPE": "type", "SELECT": "select_option"}
VALUE_ARGUMENT = {"type": "text", "select_option": "options"}
_STRING = r"""\(\s*(?:r|u)?(["'])((?:\\.|(?!\1).)*)\1"""
_SELECT = re.compile(r"\.select_by_(?:visible_text|value)" + _STRING)
_SELECT_INDEX = re.compile(r"\.select_by_index\(\s*(\d+)\s*\)")
_SEND_KEYS = re.compile(r"\.send_keys" + _STRING)
_CLICK = re.compile(r"\.click\(\s*\)")


def _unescape(literal: str) -> str:
    """A Python string literal's text: escaped quotes, backslashes and newlines undone."""
    escapes = {"n": "\n", "t": "\t"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), literal)


def selenium_operation(code: str) -> tuple[str, str]:
    """(op, value) of the Selenium call: SELECT by text/value/index, TYPE by send_keys, CLICK."""
    for pattern, op in ((_SELECT, "SELECT"), (_SEND_KEYS, "TYPE")):
        found = pattern.search(code)
        if found:
            return op, _unescape(found.group(2))
    found = _SELECT_INDEX.search(code)
    if found:
        return "SELECT", found.group(1)
    if _CLICK.search(code):
        return "CLICK", ""
    raise RecordRejected("invalid_value", f"no click, send_keys or select_by_* call in {code!r}")


def record_key(value: dict[str, Any]) -> str:
    """The row's `id`, else a hash of what the row asks (rows have no id of their own)."""
    if isinstance(value.get("id"), str) and value["id"]:
        return value["id"]
    basis = orjson.dumps([value.get(k) for k in ("query", "url", "ground_truth_outer_html")])
    return hashlib.sha256(basis).hexdigest()[:16]


class TheWaveAdapter(LandingFilesAdapter):
    name = "the_wave"
    description = "the-wave rows (JSONL or a JSON array): a page, a query and its grounded action."
    source = SOURCE

    def record_id(self, value: Any) -> str | None:
        return record_key(value) if isinstance(value, dict) else None

    def redistributable(self, dataset: str) -> bool:
        return True  # BigAction's own data

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection]:
        split = next((s for s in SPLITS if dataset == s or dataset.startswith(s + "_")), "test")
        for record in records:
            try:
                standard = import_row(record.value, split)
            except RecordRejected as exc:
                yield Rejection(record, exc.reason, exc.detail)
                continue
            standard.origin = record
            yield standard


def _row(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise RecordRejected("wrong_type", f"row is {type(value).__name__}, not an object")
    for key in FIELDS:
        if key not in value:
            raise RecordRejected("missing_field", f"row has no `{key}`")
        if not isinstance(value[key], str):
            raise RecordRejected("wrong_type", f"row.{key} is {type(value[key]).__name__}")
    if not value["html"].strip():
        raise RecordRejected("invalid_value", "row.html is empty")
    return value


def import_row(value: Any, split: str) -> StandardRecord:
    """One the-wave row as a one-step episode with its page and candidates."""
    row = _row(value)
    op, op_value = selenium_operation(row["selenium_ground_truth"])
    targets, found_by = find_outer_html(row["html"], row["ground_truth_outer_html"])
    snapshot = page_snapshot(row["html"], None)
    function = FUNCTIONS[op]
    kwargs: dict[str, Any] = {"bid": targets[0] if targets else None}
    if function in VALUE_ARGUMENT:
        kwargs[VALUE_ARGUMENT[function]] = op_value
    extra = {
        "step": 0, "op": op, "value": op_value, "target_found_by": found_by,
        "target_matches": len(targets), "selenium": row["selenium_ground_truth"],
    }  # fmt: skip
    events = [
        {"kind": "text_observation", "actor": "user", "content": row["query"]},
        {
            "kind": "web_observation", "actor": "environment", "url": row["url"],
            "html_sha": snapshot["html_sha"], "extra": orjson.dumps({"step": 0}).decode(),
        },
        {
            "kind": "api_action", "actor": "agent", "function": function,
            "kwargs": orjson.dumps(kwargs).decode(), "extra": orjson.dumps(extra).decode(),
        },
    ]  # fmt: skip
    candidates = [
        {
            "step": 0, "action_uid": record_key(row), "backend_node_id": element.bnid,
            "tag": element.tag, "attributes": orjson.dumps(element.attributes).decode(),
            "positive": element.bnid in targets, "is_original_target": element.bnid in targets,
            "is_top_level_target": None, "bbox": None, "rank": None, "score": None,
        }
        for element in interactive_elements(row["html"])
    ]  # fmt: skip
    known = {c["backend_node_id"] for c in candidates}
    candidates += [
        {
            "step": 0, "action_uid": record_key(row), "backend_node_id": target, "tag": None,
            "attributes": None, "positive": True, "is_original_target": True,
            "is_top_level_target": None, "bbox": None, "rank": None, "score": None,
        }
        for target in targets
        if target not in known
    ]  # fmt: skip
    episode = {
        "source": SOURCE, "source_format": "the_wave", "source_split": split,
        "source_id": record_key(row), "task": row["query"], "website": _host(row["url"]),
        "domain": None, "subdomain": None,
        "details": orjson.dumps({"url": row["url"]}).decode(),
    }  # fmt: skip
    return StandardRecord(episode, events, [snapshot], candidates)


def _host(url: str) -> str | None:
    found = re.match(r"^[a-z]+://(?:www\.)?([^/:?#]+)", url.strip(), re.IGNORECASE)
    return found.group(1).lower() if found else None


ADAPTER = TheWaveAdapter()
