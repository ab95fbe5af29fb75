"""Examples in a release as their consumers' own columns, not as JSON text.

In the lake an example is one JSON text per format (and a reward example one JSON `record`).
On the Hub, a user who loads a config wants the columns their trainer reads: `messages` (and
`tools`) for OpenAI-style fine-tuning and TRL, `conversations`, `system` and `tools` for
LLaMA-Factory (which can then read the config straight from the Hub), `conversations` and
`system` for OpenHands-style data, `chosen` and `rejected` for preference pairs. Nested values
become Arrow lists and structs, so the dataset viewer shows turns, not strings. `tools` stays
a JSON string: tools' parameter schemas differ from tool to tool, and one Arrow struct would
hold the union of all their fields; LLaMA-Factory expects that string anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa

from bigaction_assets.release.features import IMAGE_STRUCT

TURN = pa.struct([("from", pa.string()), ("value", pa.string())])
TOOL_CALL = pa.struct(
    [
        ("id", pa.string()),
        ("type", pa.string()),
        ("function", pa.struct([("name", pa.string()), ("arguments", pa.string())])),
    ]
)
MESSAGE = pa.struct(
    [
        ("role", pa.string()),
        ("content", pa.string()),
        ("tool_calls", pa.list_(TOOL_CALL)),
        ("tool_call_id", pa.string()),
        ("images", pa.list_(IMAGE_STRUCT)),
    ]
)
MESSAGE_KEYS = {MESSAGE.field(i).name for i in range(MESSAGE.num_fields)}

Columns = list[tuple[str, pa.DataType]]
CONSUMER_COLUMNS: dict[str, Columns] = {
    "openai": [("messages", pa.list_(MESSAGE)), ("tools", pa.string())],
    "sharegpt": [
        ("conversations", pa.list_(TURN)),
        ("system", pa.string()),
        ("tools", pa.string()),
        ("images", pa.list_(IMAGE_STRUCT)),
    ],
    "openhands": [("conversations", pa.list_(TURN)), ("system", pa.string())],
}
# a reward example's `record` (LLaMA-Factory sharegpt JSON in the lake), per kind
REWARD_COLUMNS: dict[str, Columns] = {
    "judge": [("conversations", pa.list_(TURN)), ("system", pa.string())],
    "preference": [
        ("conversations", pa.list_(TURN)), ("chosen", TURN), ("rejected", TURN),
        ("system", pa.string()),
    ],
}  # fmt: skip
# openhands repeats the example id as `id`, which the release keeps as `example_id`
REPEATED_KEYS = {"openhands": frozenset({"id"})}


def schema_with(fields: list[pa.Field], columns: Columns) -> pa.Schema:
    """`fields` (ids, metadata) followed by the consumer's `columns`."""
    return pa.schema([*fields, *(pa.field(name, kind) for name, kind in columns)])


def expand_json(
    table: pa.Table,
    column: str,
    schema: pa.Schema,
    repeated: frozenset[str] = frozenset(),
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> pa.Table:
    """`table` with its JSON `column` spread into the columns of `schema` that `table` lacks.

    A key of the JSON that no column takes is an error, never dropped in silence, unless it
    is `repeated` (held by another column already). `prepare` adjusts each parsed value first.
    """
    kept = [name for name in schema.names if name in table.column_names]
    names = set(schema.names) - set(kept)
    rows = []
    for row in table.select([*kept, column]).to_pylist():
        value = orjson.loads(row.pop(column))
        extra = set(value) - names - repeated
        if extra:
            raise ValueError(f"`{column}` has keys the release has no column for: {sorted(extra)}")
        value = prepare(value) if prepare else value
        rows.append({**row, **{key: value.get(key) for key in names}})  # absent: null
    return pa.Table.from_pylist(rows, schema=schema)


ImageReader = Callable[[str], bytes]  # an image's bytes by its path in an example


def _image(path: str, read: ImageReader) -> dict[str, Any]:
    """An `Image` feature's value: the lake's bytes, named `<image_sha>.<format>`."""
    return {"bytes": read(path), "path": path.rsplit("/", 1)[-1]}


def _message(message: dict[str, Any], read: ImageReader) -> dict[str, Any]:
    """A message whose content is parts (a user's screenshots, then text) as its text and its
    images, in order: one Arrow type for every message's content."""
    unknown = set(message) - MESSAGE_KEYS
    if unknown:
        raise ValueError(f"an openai message has keys with no column: {sorted(unknown)}")
    parts = message.get("content")
    if not isinstance(parts, list):
        return message
    texts = [part["text"] for part in parts if part.get("type") == "text"]
    images = [part["image_url"]["url"] for part in parts if part.get("type") == "image_url"]
    shown = [_image(url, read) for url in images]
    return {**message, "content": "\n\n".join(texts), "images": shown}


def sft_table(table: pa.Table, fmt: str, schema: pa.Schema, read: ImageReader) -> pa.Table:
    """Rows of `sft_examples` (ids and the JSON text of `fmt`) as config `sft_<fmt>`; each
    image path of an example becomes the image (`read` gives its bytes)."""

    def openai(example: dict[str, Any]) -> dict[str, Any]:
        messages = [_message(message, read) for message in example["messages"]]
        return {**example, "messages": messages, "tools": orjson.dumps(example["tools"]).decode()}

    def sharegpt(example: dict[str, Any]) -> dict[str, Any]:
        if "images" not in example:
            return example
        return {**example, "images": [_image(path, read) for path in example["images"]]}

    prepare = {"openai": openai, "sharegpt": sharegpt}.get(fmt)
    return expand_json(table, fmt, schema, REPEATED_KEYS.get(fmt, frozenset()), prepare)
