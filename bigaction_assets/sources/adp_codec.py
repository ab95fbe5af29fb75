"""The ADP codec: an ADP standardized trajectory as our episode and event rows (and back, in
adp_codec_export.py).

An ADP record is `{id, content[], details}`; each content item has a `class_`. Fields that a
column models go to that column; anything else, and the item's original key order, goes to the
event's `extra` JSON, so that exporting gives back the same items and fields.
"""

from __future__ import annotations

import base64
from typing import Any
from urllib.parse import urlsplit

import orjson

from bigaction_assets.hashing import page_snapshot
from bigaction_assets.images.header import ImageRefused, inspect
from bigaction_assets.images.refs import InlineImage, image_ref
from bigaction_assets.sources.adp_outcome import recorded_completion
from bigaction_assets.sources.base import RecordRejected, StandardRecord

KEY_ORDER = "_keys"
NESTED_IMAGE = "image_observation"
INLINE_IMAGE = "_inline_image"  # extra: the event's image is inline data, kept in `images`

# ADP field -> events column, per content class. `html` and `viewport_size` are mapped by hand.
COLUMNS: dict[str, dict[str, str]] = {
    "text_observation": {"content": "content", "source": "actor", "name": "name"},
    "image_observation": {"content": "image_path", "source": "actor"},
    "web_observation": {"axtree": "axtree", "url": "url"},
    "api_action": {"function": "function", "description": "description"},
    "code_action": {"language": "language", "content": "content", "description": "description"},
    "message_action": {"content": "content", "description": "description"},
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "text_observation": ("content",),
    "image_observation": ("content",),
    "web_observation": (),
    "api_action": ("function",),
    "code_action": ("content",),
    "message_action": ("content",),
}
_DEFAULT_ACTOR = {
    "web_observation": "environment",
    "api_action": "agent",
    "code_action": "agent",
    "message_action": "agent",
}
_ADP_SOURCES = ("user", "environment", "agent")
MAX_PIXELS = 2**31 - 1  # the largest viewport side events.viewport_width/height hold (Int32)


def _expect(value: Any, kind: type | tuple[type, ...], where: str, nullable: bool = True) -> Any:
    if value is None and nullable:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RecordRejected("wrong_type", f"{where} is {type(value).__name__}, not {kind}")
    return value


def import_trajectory(value: Any, source: str) -> StandardRecord:
    """One ADP trajectory as an episode row, event rows and page snapshots."""
    if not isinstance(value, dict):
        raise RecordRejected(
            "wrong_type", f"a trajectory is a JSON object, not {type(value).__name__}"
        )
    for key in ("id", "content"):
        if key not in value:
            raise RecordRejected("missing_field", f"trajectory has no `{key}`")
    source_id = _expect(value["id"], (str, int), "`id`", nullable=False)
    content = _expect(value["content"], list, "`content`", nullable=False)
    details = _expect(value.get("details", {}), dict, "`details`") or {}
    events: list[dict[str, Any]] = []
    snapshots: list[dict[str, Any]] = []
    for position, item in enumerate(content):
        event, snapshot = import_item(item, f"content[{position}]")
        events.append(event)
        if snapshot is not None:
            snapshots.append(snapshot)
    extra = {k: v for k, v in value.items() if k not in ("id", "content", "details")}
    episode = {
        "source": source,
        "source_format": "adp",
        "source_split": None,
        "source_id": str(source_id),
        "task": _task(details, events),
        "website": _website(details, events),
        "domain": None,
        "subdomain": None,
        "details": _json({**details, **({"_record_extra": extra} if extra else {})}),
        "task_completed": recorded_completion(details, source),
    }
    # markers of what the record's shape was, so that export gives back exactly that shape
    markers = {
        "_no_details": "details" not in value,
        "_null_details": "details" in value and value["details"] is None,
        "_int_id": isinstance(source_id, int),
    }
    if any(markers.values()):
        marked = {key: True for key, flag in markers.items() if flag}
        episode["details"] = _json({**orjson.loads(episode["details"]), **marked})
    return StandardRecord(episode=episode, events=events, snapshots=snapshots)


def import_item(item: Any, where: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """One content item as an event row (without episode_id/idx) and its page, if it has one."""
    if not isinstance(item, dict):
        raise RecordRejected("wrong_type", f"{where} is {type(item).__name__}, not an object")
    kind = item.get("class_")
    if kind is None:
        raise RecordRejected("missing_field", f"{where} has no `class_`")
    if not isinstance(kind, str) or kind not in COLUMNS:  # a list or object is no class_
        raise RecordRejected("unknown_class", f"{where} has unknown class_ {kind!r}")
    for key in _REQUIRED[kind]:
        if key not in item:
            raise RecordRejected("missing_field", f"{where} ({kind}) has no `{key}`")
    event: dict[str, Any] = {"kind": kind, "actor": _DEFAULT_ACTOR.get(kind)}
    extra: dict[str, Any] = {KEY_ORDER: list(item)}
    snapshot = None
    for key, field_value in item.items():
        if key == "class_":
            continue
        column = COLUMNS[kind].get(key)
        if column is not None:
            event[column] = _expect(field_value, str, f"{where}.{key}")
            if column == "image_path":
                _take_image(event[column], event, extra)
        elif kind == "api_action" and key == "kwargs":
            event["kwargs"] = _json(_expect(field_value, dict, f"{where}.kwargs"))
        elif kind == "web_observation" and key == "html":
            html = _expect(field_value, str, f"{where}.html")
            if html is not None:
                snapshot = page_snapshot(html, None)
                event["html_sha"] = snapshot["html_sha"]
            else:
                extra["html_null"] = True
        elif kind == "web_observation" and key == "viewport_size":
            _import_viewport(field_value, event, extra, where)
        elif (
            kind == "web_observation"
            and key == NESTED_IMAGE
            and isinstance(field_value, dict)
            and "content" in field_value
        ):
            image_path = _expect(field_value["content"], str, f"{where}.image_observation")
            _take_image(image_path, event, extra)
            # the path lives in its column; a placeholder keeps the nested key order
            extra[NESTED_IMAGE] = {**field_value, "content": None}
        else:
            extra[key] = field_value
    if event["actor"] is None:
        raise RecordRejected("missing_field", f"{where} ({kind}) has no `source`")
    if event["actor"] not in _ADP_SOURCES:
        raise RecordRejected("invalid_value", f"{where}.source is {event['actor']!r}")
    event["extra"] = _json(extra)
    return event, snapshot


def _take_image(text: str | None, event: dict[str, Any], extra: dict[str, Any]) -> None:
    """The image as `image_path` (as the source names it) and as where the spine finds it.
    Inline data the `images` table will hold is kept there only, by hash, with what export
    needs to write the same text back (`INLINE_IMAGE`: the text before the base64)."""
    event["image_path"], event["image"] = text, image_ref(text)
    ref = event["image"]
    if not isinstance(ref, InlineImage):
        return
    encoded = base64.b64encode(ref.data).decode()
    try:
        inspect(ref.data)  # what is refused is not stored, so its text stays in the event
    except ImageRefused:
        return
    if text is not None and text.endswith(encoded):  # canonical base64: written back as is
        event["image_path"] = None
        extra[INLINE_IMAGE] = text[: len(text) - len(encoded)]


def _import_viewport(value: Any, event: dict[str, Any], extra: dict[str, Any], where: str) -> None:
    if value is None:
        return
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        if max(value) > MAX_PIXELS:  # the columns are Int32: refused here, not by the writer
            raise RecordRejected("invalid_value", f"{where}.viewport_size {value!r} is too large")
        event["viewport_width"], event["viewport_height"] = value
        return
    raise RecordRejected("wrong_type", f"{where}.viewport_size is {value!r}, not [width, height]")


def _task(details: dict[str, Any], events: list[dict[str, Any]]) -> str | None:
    task = details.get("task_description")
    if isinstance(task, str) and task:
        return task
    for event in events:
        if event["kind"] == "text_observation" and event.get("actor") == "user":
            return event.get("content")
    # ADP's AndroidControl and Android-in-the-Wild converters open the trajectory with the goal
    # as a message of the agent's, before anything is observed
    if events and events[0]["kind"] == "message_action" and events[0].get("content"):
        return events[0]["content"]
    return None


def _website(details: dict[str, Any], events: list[dict[str, Any]]) -> str | None:
    website = details.get("website")
    if isinstance(website, str) and website:
        return website
    for event in events:
        if event.get("url"):
            host = urlsplit(event["url"]).hostname
            if host:
                return host
    return None


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
