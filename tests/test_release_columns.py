"""SFT and reward examples become their consumers' columns in a release, exactly, and a field
the release has no column for stops the build instead of vanishing."""

from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from bigaction_assets.release.columns import (
    CONSUMER_COLUMNS,
    REWARD_COLUMNS,
    expand_json,
    schema_with,
    sft_table,
)

IDS = [pa.field(name, pa.string()) for name in ("example_id", "split", "source")]
CALL = {"id": "call_1", "type": "function", "function": {"name": "click", "arguments": '{"a": 1}'}}
OPENAI = {
    "messages": [
        {"role": "system", "content": "You browse."},
        {"role": "user", "content": "Buy milk"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "clicked"},
    ],
    "tools": [{"type": "function", "function": {"name": "click", "parameters": {}}}],
}
PREFERENCE = {
    "conversations": [{"from": "human", "value": "what the user did"}],
    "chosen": {"from": "gpt", "value": "a"},
    "rejected": {"from": "gpt", "value": "b"},
    "system": "You are a proactive assistant.",
}


def table_of(fmt: str, example: dict) -> pa.Table:
    text = orjson.dumps(example).decode()
    return pa.table({"example_id": ["e#0"], "split": ["train"], "source": ["s"], fmt: [text]})


STORED = {"images/ab.png": b"png bytes", "images/cd.webp": b"webp bytes"}


def rows(fmt: str, example: dict) -> list[dict]:
    schema = schema_with(IDS, CONSUMER_COLUMNS[fmt])
    return sft_table(table_of(fmt, example), fmt, schema, STORED.__getitem__).to_pylist()


def test_example_images_become_image_values_with_the_lake_s_bytes() -> None:
    shown = {"type": "image_url", "image_url": {"url": "images/ab.png"}}
    with_parts = {**OPENAI, "messages": [
        {"role": "user", "content": [shown, {"type": "text", "text": "what now?"}]},
        {"role": "assistant", "content": "click"},
    ]}  # fmt: skip
    [row] = rows("openai", with_parts)
    user = row["messages"][0]
    assert user["content"] == "what now?"
    assert user["images"] == [{"bytes": b"png bytes", "path": "ab.png"}]
    turns = [{"from": "human", "value": "<image><image>hi"}]
    paths = ["images/cd.webp", "images/ab.png"]
    sharegpt = {"conversations": turns, "system": "s", "tools": "[]", "images": paths}
    [row] = rows("sharegpt", sharegpt)
    assert row["images"] == [
        {"bytes": b"webp bytes", "path": "cd.webp"},
        {"bytes": b"png bytes", "path": "ab.png"},
    ]
    with pytest.raises(KeyError):  # an image the lake lacks stops the release, never dropped
        rows("sharegpt", {**sharegpt, "images": ["images/gone.png"]})


def test_openai_messages_become_structs_with_nulls_for_missing_fields() -> None:
    [row] = rows("openai", OPENAI)
    assert row["example_id"] == "e#0" and orjson.loads(row["tools"]) == OPENAI["tools"]
    call, result = row["messages"][2], row["messages"][3]
    assert call["tool_calls"] == [CALL]
    assert call["content"] is None and call["tool_call_id"] is None
    assert result == {
        "role": "tool", "content": "clicked", "tool_calls": None, "tool_call_id": "call_1",
        "images": None,
    }  # fmt: skip


def test_a_field_without_a_column_stops_the_release() -> None:
    named = {**OPENAI, "messages": [{"role": "user", "content": "x", "name": "ana"}]}
    with pytest.raises(ValueError, match="name"):
        rows("openai", named)
    with pytest.raises(ValueError, match="videos"):
        rows("sharegpt", {"conversations": [], "system": "s", "tools": "[]", "videos": []})


def test_a_preference_record_becomes_conversations_chosen_and_rejected() -> None:
    schema = schema_with([pa.field("example_id", pa.string())], REWARD_COLUMNS["preference"])

    def table(record: dict) -> pa.Table:
        return pa.table({"example_id": ["p#0"], "record": [orjson.dumps(record).decode()]})

    [row] = expand_json(table(PREFERENCE), "record", schema).to_pylist()
    assert row == {"example_id": "p#0", **PREFERENCE}
    with pytest.raises(ValueError, match="ranking"):
        expand_json(table({**PREFERENCE, "ranking": True}), "record", schema)
