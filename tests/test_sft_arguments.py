"""Decoding ADP's Python-literal kwargs into JSON arguments, and specs for unknown functions."""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bigaction_assets.sft.arguments import NOT_A_LITERAL, decode_arguments, python_literal
from bigaction_assets.sft.tools import KNOWN_TOOLS, infer_spec, tools_for_calls


@pytest.mark.parametrize(
    ("function", "kwargs", "expected"),
    [
        ("click", {"bid": '"93"'}, {"bid": "93"}),  # ADP: a quoted Python literal
        ("type", {"bid": '"976"', "text": '"19.99"', "press_enter_after": "0"},
         {"bid": "976", "text": "19.99", "press_enter_after": 0}),
        ("goto", {"url": "'https://pass.run'"}, {"url": "https://pass.run"}),
        ("type", {"bid": "8635", "text": "x"}, {"bid": "8635", "text": "x"}),  # Mind2Web: plain
        ("click", {"bid": "8635"}, {"bid": "8635"}),  # an id stays a string, as its spec says
        ("click", {"bid": None}, {}),  # no target: the argument is absent, not null
        ("select_option", {"bid": '"5"', "options": "['red', 'blue']"},
         {"bid": "5", "options": ["red", "blue"]}),
        ("str_replace_editor", {"command": "view", "path": "/a.py", "view_range": [1, 9]},
         {"command": "view", "path": "/a.py", "view_range": [1, 9]}),  # SWE-smith: plain
        ("execute_x", {"code": "__import__('os').system('x')"},
         {"code": "__import__('os').system('x')"}),  # never evaluated, only literals
        ("new_tab", {}, {}),
        # ADP's quoting without escapes (nebius SWE-agent, OpenHands): a real newline or an
        # inner quote makes it no literal, yet the quotes are not part of the value
        ("edit", {"start_line": 5, "replacement_text": '"import a\nb = "x"\n"'},
         {"start_line": 5, "replacement_text": 'import a\nb = "x"\n'}),
        ("delegate_to_agent", {"agent": '"CodeActAgent"', "task": '"Go to "https://x.org""'},
         {"agent": "CodeActAgent", "task": 'Go to "https://x.org"'}),
        # a plain argument beside it: the call is not quoted, every value stays as written
        ("str_replace_editor", {"command": "create", "file_text": '"a"\n"b"'},
         {"command": "create", "file_text": '"a"\n"b"'}),
    ],
)  # fmt: skip
def test_decode_arguments(function, kwargs, expected):
    assert decode_arguments(json.dumps(kwargs), KNOWN_TOOLS.get(function)) == expected


def test_decode_arguments_odd_inputs():
    assert decode_arguments(None) == {}
    assert decode_arguments("not json") == {"input": "not json"}
    assert decode_arguments('["a"]') == {"input": ["a"]}
    assert decode_arguments(json.dumps({"n": "(1, 2)"})) == {"n": [1, 2]}


def test_unknown_function_gets_inferred_spec():
    spec = infer_spec("str_replace_editor", [
        {"command": "view", "path": "/a.py", "view_range": [1, 9]},
        {"command": "create", "path": "/b.py", "file_text": "x"},
    ])  # fmt: skip
    assert spec.parameters == {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "path": {"type": "string"},
            "view_range": {"type": "array"},
            "file_text": {"type": "string"},
        },
        "required": ["command", "path"],
    }


def test_tools_for_calls_offers_action_space_and_infers_the_rest():
    tools = tools_for_calls([("click", {"bid": "1"}), ("frobnicate", {"level": 3})])
    names = [tool.name for tool in tools]
    assert {"click", "hover", "goto", "go_back", "new_tab", "tab_focus", "close_tab"} <= set(names)
    assert names[-1] == "frobnicate"
    assert tools[-1].parameters["properties"] == {"level": {"type": "integer"}}
    # a known name called with arguments its spec lacks gets an inferred spec, not a crash
    [click] = tools_for_calls([("click", {"element_id": "1121"})])
    assert list(click.properties) == ["element_id"]


def _reference_literal(text: str):
    try:
        return ("literal", ast.literal_eval(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ("not a literal",)


def _ours(text: str):
    value = python_literal(text)
    return ("not a literal",) if value is NOT_A_LITERAL else ("literal", value)


# Texts that look like ADP arguments, like code, and like the corners of Python's tokenizer.
_PIECES = st.sampled_from(
    ['"', "'", "\\", "\n", "\r", "\t", " ", "#", "\x0c", "\x00", "-", "+", ".", "0", "7", "j",
     "(", ")", "[", "]", "{", "}", ",", ":", "True", "None", "set(", "r", "b", "u", "x", "_",
     "import os", "/testbed/a.py", "93", "é"]
)  # fmt: skip
_LITERALS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=6,
).map(repr)


# literal_eval warns on an unknown escape such as \: yet reads it; so must we, quietly
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")
@settings(max_examples=400, deadline=None)
@given(st.one_of(_LITERALS, st.lists(_PIECES, max_size=8).map("".join), st.text(max_size=12)))
@example("\\\r0")  # a backslash before a lone carriage return continues the line too
@example("\\\r\n0")
def test_python_literal_agrees_with_literal_eval(text):
    """The fast paths give what `ast.literal_eval` gives, for every text."""
    assert _ours(text) == _reference_literal(text)


@pytest.mark.parametrize(
    "text",
    ['"93"', "'x'", "0", "-12", "007", "True", " None ", "\n5", "# c\n5", "\\\n5", "(1, 2)",
     "[1]", "u'x'", "set()", '"a\\nb"', "1_000", "1e3", "Trueish", "/testbed/a.py", "ls -la",
     "def f():\n    pass", '"a\rb"', '"\x00"', "9" * 5000, ""],
)  # fmt: skip
def test_python_literal_corner_cases(text):
    assert _ours(text) == _reference_literal(text)
