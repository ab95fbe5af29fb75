"""A call's JSON text is `json.dumps(..., ensure_ascii=False)` to the byte, whichever way it is
made: orjson for arguments that are all strings, the standard library for the rest."""

from __future__ import annotations

import json
import random

import pytest

from bigaction_assets.sft.turns import ToolCall, arguments_json, json_string


def standard(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def every_character_but_surrogates() -> str:
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


def test_every_character_is_escaped_as_the_standard_library_escapes_it() -> None:
    text = every_character_but_surrogates()
    assert json_string(text) == standard(text)
    # one character at a time too: an escape table off by one shows here, not in the whole
    for code in [*range(0x80), 0x7F, 0x80, 0xA0, 0x2028, 0x2029, 0xFEFF, 0xFFFF, 0x10FFFF]:
        assert json_string(chr(code)) == standard(chr(code)), hex(code)


def test_string_arguments_are_written_as_the_standard_library_writes_them() -> None:
    draw = random.Random(13)
    alphabet = every_character_but_surrogates()
    pool = [*"\"\\\n\r\t\b\f\x00\x1f\x7f /<>&'", "é", "\u6771", "\U0001f600", "\u2028"]
    for _ in range(500):
        arguments = {}
        for _ in range(draw.randint(0, 5)):
            key = "".join(draw.choice([*pool, "a", "b", "_"]) for _ in range(draw.randint(0, 6)))
            value = "".join(
                draw.choice(pool) if draw.random() < 0.5 else draw.choice(alphabet)
                for _ in range(draw.randint(0, 40))
            )
            arguments[key] = value
        assert arguments_json(arguments) == standard(arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"dx": 0, "dy": -300},
        {"bid": "93", "press_enter": True},
        {"options": ["a", "b"], "nested": {"k": None}},
        {"ratio": 0.1, "big": 10**30, "inf": float("inf")},
        {"text": "a lone \ud800 surrogate"},
        {"\udfff": "a surrogate key"},
        {1: "an int key"},
    ],
)
def test_other_arguments_go_the_standard_way(arguments) -> None:
    assert arguments_json(arguments) == standard(arguments)


def test_a_string_subclass_goes_the_standard_way() -> None:
    class Path(str):
        pass

    assert arguments_json({"path": Path("/testbed/a.py")}) == standard({"path": "/testbed/a.py"})


def test_the_call_of_a_named_function_is_its_standard_json() -> None:
    for name in ["click", "str_replace_editor", "caf\u00e9", "a\ud800b"]:
        call = ToolCall("call_1", name, {"old_str": 'x = "1"\n', "new_str": "x = 2\t# é"})
        expected = standard({"name": name, "arguments": call.arguments})
        assert call.call_json == expected
