"""The one intermediate form every SFT format renders from: turns and tool calls of an episode,
and a conversation (or a window) of them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import orjson

from bigaction_assets.sft.tools import ToolSpec

Role = Literal["system", "user", "assistant", "tool"]
# `json.dumps(value, ensure_ascii=False)`, the same text: dumps builds an encoder on every call
# given an option, ~1 us of the ~3 it takes for a call's arguments, on every call of every episode
_JSON_NON_ASCII = json.JSONEncoder(ensure_ascii=False)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]

    @cached_property
    def arguments_json(self) -> str:
        """`arguments_json(self.arguments)`, made once: every window and format shows it."""
        return arguments_json(self.arguments)

    @cached_property
    def call_json(self) -> str:
        """`json.dumps({"name": ..., "arguments": ...})`: the call as LLaMA-Factory's
        function_call value holds it, made once for every window."""
        name = json_string(self.name)
        return f'{{"name": {name}, "arguments": {self.arguments_json}}}'


@dataclass
class Turn:
    """One message: `tool_calls` for an assistant turn that acts, `tool_call_id` for a result.

    `images` are the file names (`<image_sha>.<format>`) of the screenshots an observation turn
    shows, in order; every format puts a turn's images before its text.
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    images: list[str] = field(default_factory=list)


def side_groups(turns: Sequence[Turn]) -> list[list[Turn]]:
    """Runs of consecutive turns of one side (the assistant's, or the user's and tools'): each
    run is one message in every format, so the formats hold the same messages. A user-side run
    holds at most one tool result, first: results follow their call at once."""
    groups: list[list[Turn]] = []
    for turn in turns:
        if groups and (groups[-1][0].role == "assistant") == (turn.role == "assistant"):
            groups[-1].append(turn)
        else:
            groups.append([turn])
    return groups


def assistant_text_and_calls(group: Sequence[Turn]) -> tuple[str, list[ToolCall]]:
    """An assistant run as one message: its texts (the thought, for a run that calls), blank
    lines between, and its calls in order."""
    if len(group) == 1:  # the usual run: one turn
        return group[0].content, group[0].tool_calls
    text = "\n\n".join(turn.content for turn in group if turn.content)
    return text, [call for turn in group for call in turn.tool_calls]


@dataclass
class Conversation:
    """One episode's messages, or one window of them (`window` of `windows`, from 0)."""

    episode_id: str
    system: str
    tools: Sequence[ToolSpec]
    turns: list[Turn]
    window: int = 0
    windows: int = 1
    # `windows.conversation_tokens`, once something has counted it; a cache, not identity
    tokens: int | None = field(default=None, compare=False)

    @cached_property
    def groups(self) -> list[list[Turn]]:
        """`side_groups(self.turns)`, made once: each is a message in every format."""
        return side_groups(self.turns)


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """Arguments as key-order-preserving JSON text (same input, same bytes): exactly
    `json.dumps(arguments, ensure_ascii=False)`, which every format shows. Arguments that are
    all strings (an edit's old and new text, a command, an element id) are written a string at
    a time by orjson, whose escaping is the standard library's for every character but a lone
    surrogate, which it refuses (such a call, like any other, goes the standard way): 2.8x
    faster on an edit, and the text of every call of every episode is made so."""
    parts = []
    try:
        for key, value in arguments.items():
            if type(key) is not str or type(value) is not str:
                return _JSON_NON_ASCII.encode(dict(arguments))
            parts.append(f"{orjson.dumps(key).decode()}: {orjson.dumps(value).decode()}")
    except orjson.JSONEncodeError:
        return _JSON_NON_ASCII.encode(dict(arguments))
    return f"{{{', '.join(parts)}}}"


def json_string(text: str) -> str:
    """`json.dumps(text, ensure_ascii=False)`, by orjson where its escaping is the same."""
    if type(text) is str:
        try:
            return orjson.dumps(text).decode()
        except orjson.JSONEncodeError:
            pass
    return _JSON_NON_ASCII.encode(text)
