"""What the formats make of an episode's tools is made once per tool set, and is what they
made before of the same specs: one key, one JSON text, one list of OpenAI tools."""

from __future__ import annotations

import json

from bigaction_assets.sft.counting import _openai_tools_tokens
from bigaction_assets.sft.openhands_format import system_text
from bigaction_assets.sft.sharegpt_format import tools_json
from bigaction_assets.sft.tools import (
    BROWSER_TOOLS,
    ToolSet,
    once_per_tool_set,
    openai_tools,
    tool_set_key,
    tools_for_calls,
)
from bigaction_assets.sft.turns import Conversation
from bigaction_assets.tokens import count_tokens


def test_an_episodes_tools_come_as_a_set_keyed_as_a_list_of_the_same_specs() -> None:
    tools = tools_for_calls([("click", {"bid": "1"}), ("frobnicate", {"level": 3})])
    assert isinstance(tools, ToolSet)
    assert tool_set_key(tools) == tool_set_key(list(tools))
    assert tool_set_key(tools) == tuple(json.dumps(s.as_function()) for s in tools)
    assert tools.key is tools.key  # made once


def test_what_a_set_makes_is_made_once_and_the_memo_stays_bounded() -> None:
    memo: dict[int, str] = {}
    made: list[int] = []

    def make(key: int) -> str:
        made.append(key)
        return f"made {key}"

    assert once_per_tool_set(memo, 1, lambda: make(1), limit=2) == "made 1"
    assert once_per_tool_set(memo, 1, lambda: make(1), limit=2) == "made 1"
    assert once_per_tool_set(memo, 2, lambda: make(2), limit=2) == "made 2"
    assert made == [1, 2]
    once_per_tool_set(memo, 3, lambda: make(3), limit=2)  # full: emptied first
    assert set(memo) == {3}


def test_two_episodes_with_the_same_tools_share_what_the_formats_make_of_them() -> None:
    first = Conversation("e/1", "system", tools_for_calls([("click", {"bid": "1"})]), [])
    second = Conversation("e/2", "system", tools_for_calls([("click", {"bid": "9"})]), [])
    assert first.tools is not second.tools
    assert tools_json(first) is tools_json(second)
    assert openai_tools(first.tools) is openai_tools(second.tools)
    assert system_text(first) is system_text(second)


def test_a_set_gives_the_texts_and_counts_its_specs_give_as_a_list() -> None:
    specs = list(BROWSER_TOOLS[:4])
    as_list = Conversation("e/1", "system", specs, [])
    as_set = Conversation("e/2", "system", ToolSet(specs), [])
    expected = json.dumps([s.as_function() for s in specs], ensure_ascii=False)
    assert tools_json(as_set) == tools_json(as_list) == expected
    assert openai_tools(as_set.tools) == [s.as_openai_tool() for s in specs]
    assert system_text(as_set) == system_text(as_list)
    listed = json.dumps([s.as_openai_tool() for s in specs], separators=(",", ":"))
    assert _openai_tools_tokens(as_set) == _openai_tools_tokens(as_list) == count_tokens(listed)
