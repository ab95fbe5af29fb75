"""The ADP codec's way back: our episode and event rows as the ADP trajectory they came from."""

from __future__ import annotations

import base64
from typing import Any

import orjson

from bigaction_assets.images.refs import InlineImage
from bigaction_assets.sources import adp_thoughts
from bigaction_assets.sources.adp_codec import COLUMNS, INLINE_IMAGE, KEY_ORDER, NESTED_IMAGE


def export_item(event: dict[str, Any], html: str | None) -> dict[str, Any]:
    """An event row (with its page's raw HTML, if any, and `image_bytes` when its image was
    inline) back as an ADP content item."""
    kind = event["kind"]
    extra = orjson.loads(event["extra"]) if event.get("extra") else {}
    keys = extra.pop(KEY_ORDER, None)
    image_text = _image_text(event, extra)
    fields: dict[str, Any] = {"class_": kind}
    for key, column in COLUMNS[kind].items():
        fields[key] = image_text if column == "image_path" else event.get(column)
    if adp_thoughts.DESCRIPTION_BEFORE in extra:  # a cached thought: the record had this
        fields["description"] = extra.pop(adp_thoughts.DESCRIPTION_BEFORE)
    if kind == "api_action":
        fields["kwargs"] = orjson.loads(event["kwargs"]) if event.get("kwargs") else None
    if kind == "web_observation":
        fields["html"] = html
        width, height = event.get("viewport_width"), event.get("viewport_height")
        fields["viewport_size"] = [width, height] if width is not None else None
        nested = extra.pop(NESTED_IMAGE, None)
        if isinstance(nested, dict) and "content" in nested:  # its path is in the column
            nested = {**nested, "content": image_text}
        fields[NESTED_IMAGE] = nested  # else kept as the record had it (none, {}, 0, ...)
        extra.pop("html_null", None)
    fields.update(extra)
    if keys is None:
        return fields
    return {key: fields.get(key) for key in keys}


def _image_text(event: dict[str, Any], extra: dict[str, Any]) -> str | None:
    """The image as the record wrote it: its path, or its inline data written back."""
    prefix = extra.pop(INLINE_IMAGE, None)
    if prefix is None:
        return event.get("image_path")
    data = event.get("image_bytes")  # from `images`; an event fresh from import holds its ref
    if data is None and isinstance(event.get("image"), InlineImage):
        data = event["image"].data
    return None if data is None else prefix + base64.b64encode(data).decode()


def export_trajectory(
    episode: dict[str, Any], events: list[dict[str, Any]], pages: dict[str, str]
) -> dict[str, Any]:
    """An episode and its events (ordered by idx) back as an ADP trajectory."""
    details = orjson.loads(episode["details"])
    record_extra = details.pop("_record_extra", {})
    no_details = details.pop("_no_details", False)
    null_details = details.pop("_null_details", False)
    int_id = details.pop("_int_id", False)
    source_id: Any = int(episode["source_id"]) if int_id else episode["source_id"]
    content = [export_item(event, pages.get(event.get("html_sha") or "")) for event in events]
    trajectory: dict[str, Any] = {"id": source_id, "content": content}
    if null_details:
        trajectory["details"] = None
    elif not no_details:
        trajectory["details"] = details
    trajectory.update(record_extra)
    return trajectory
