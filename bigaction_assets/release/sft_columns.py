"""SFT examples in a release as their consumers' own columns, not as JSON text.

In the lake an example is one JSON text per format. On the Hub, a user who loads a config
wants the columns their trainer reads: `messages` (and `tools`) for OpenAI-style fine-tuning
and TRL, `conversations`, `system` and `tools` for LLaMA-Factory (which can then read the
config straight from the Hub), `conversations` and `system` for OpenHands-style data. Nested
values become Arrow lists and structs, so the dataset viewer shows turns, not strings. `tools`
stays a JSON string: tools' parameter schemas differ from tool to tool, and one Arrow struct
would hold the union of all their fields; LLaMA-Factory expects that string anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa

ID_COLUMNS = ("example_id", "split", "source")

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
    ]
)
MESSAGE_KEYS = {MESSAGE.field(i).name for i in range(MESSAGE.num_fields)}

COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "openai": [("messages", pa.list_(MESSAGE)), ("tools", pa.string())],
    "sharegpt": [
        ("conversations", pa.list_(TURN)),
        ("system", pa.string()),
        ("tools", pa.string()),
    ],
    "openhands": [("conversations", pa.list_(TURN)), ("system", pa.string())],
}


def _openai(example: dict[str, Any]) -> dict[str, Any]:
    return {"messages": example["messages"], "tools": orjson.dumps(example["tools"]).decode()}


def _sharegpt(example: dict[str, Any]) -> dict[str, Any]:
    return {key: example[key] for key in ("conversations", "system", "tools")}


def _openhands(example: dict[str, Any]) -> dict[str, Any]:
    return {key: example[key] for key in ("conversations", "system")}


_FIELDS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "openai": _openai,
    "sharegpt": _sharegpt,
    "openhands": _openhands,
}


def release_schema(fmt: str, id_fields: list[pa.Field]) -> pa.Schema:
    """The columns of config `sft_<fmt>`: the example's ids, then the consumer's columns."""
    return pa.schema([*id_fields, *(pa.field(name, kind) for name, kind in COLUMNS[fmt])])


def native_table(table: pa.Table, fmt: str, schema: pa.Schema) -> pa.Table:
    """`table`'s rows (ids and the JSON text of `fmt`) with the text parsed into `schema`'s
    columns; a key the schema does not name is an error, never dropped in silence."""
    ids = {name: table[name].to_pylist() for name in ID_COLUMNS}
    rows = []
    for index, text in enumerate(table[fmt].to_pylist()):
        example = orjson.loads(text)
        fields = _FIELDS[fmt](example)
        _check_keys(example, fmt, fields)
        rows.append({**{name: ids[name][index] for name in ID_COLUMNS}, **fields})
    return pa.Table.from_pylist(rows, schema=schema)


def _check_keys(example: dict[str, Any], fmt: str, fields: dict[str, Any]) -> None:
    # openhands repeats the example id as `id`, which the release keeps as `example_id`
    allowed = {name for name, _ in COLUMNS[fmt]} | ({"id"} if fmt == "openhands" else set())
    extra = set(example) - allowed
    if extra:
        raise ValueError(f"{fmt} example has keys the release has no column for: {sorted(extra)}")
    if fmt == "openai":
        for message in fields["messages"]:
            unknown = set(message) - MESSAGE_KEYS
            if unknown:
                raise ValueError(f"openai message has keys with no column: {sorted(unknown)}")
