"""The turns of a rendered SFT example, read back from each format, to compare the formats."""

from __future__ import annotations

import json
from typing import Any

from bigaction_assets.sft.openhands_blocks import parameter_text, read_message
from bigaction_assets.sft.sharegpt_format import THOUGHT_WORDS

# (side, text, calls): side is `user`, `result` (a tool result), `call` or `reply`; text is a
# user-side message's text, or an assistant's text besides its calls (its thought, stripped as
# OpenHands strips it); calls are (name, {key: the value's text, stripped as OpenHands does}).
Turn = tuple[str, str, list[tuple[str, dict[str, str]]]]
ASSISTANT_SIDES = ("call", "reply")


def _call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
    return name, {key: parameter_text(value).strip() for key, value in arguments.items()}


def openai_turns(example: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for message in example["messages"][1:]:
        role, content = message["role"], message.get("content") or ""
        calls = [
            _call(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or []
        ]
        if role == "assistant":
            turns.append(("call" if calls else "reply", content.strip(), calls))
        else:
            turns.append(({"user": "user", "tool": "result"}[role], content, []))
    return turns


def sharegpt_turns(example: dict[str, Any]) -> list[Turn]:
    opening, closing = THOUGHT_WORDS
    turns: list[Turn] = []
    for entry in example["conversations"]:
        role, value = entry["from"], entry["value"]
        if role == "gpt":
            turns.append(("reply", value.strip(), []))
        elif role != "function_call":
            turns.append(({"human": "user", "observation": "result"}[role], value, []))
        else:
            thought = ""
            if value.startswith(opening):
                thought, value = value[len(opening) :].split(closing, 1)
            read = json.loads(value)
            calls = [
                _call(c["name"], c["arguments"])
                for c in (read if isinstance(read, list) else [read])
            ]
            turns.append(("call", thought.strip(), calls))
    return turns


def openhands_turns(example: dict[str, Any]) -> list[Turn]:
    """Turns as OpenHands reads them: a tool result is a human message under its header."""
    turns: list[Turn] = []
    for entry in example["conversations"]:
        if entry["from"] == "human":
            turns.append(("user", entry["value"], []))
            continue
        thought, call = read_message(entry["value"])
        turns.append(("call", thought, [call]) if call else ("reply", thought, []))
    return turns


def disagreements(renderings: dict[str, dict[str, Any]]) -> list[str]:
    """Where the formats of one example disagree on its turns (empty when they agree)."""
    openai = openai_turns(renderings["openai"])
    problems = []
    if sharegpt_turns(renderings["sharegpt"]) != openai:
        problems.append("sharegpt's turns are not openai's")
    expected: list[Turn] = []
    called = None
    for side, text, calls in openai:
        if side == "result":
            expected.append(("user", f"EXECUTION RESULT of [{called}]:\n{text}", []))
        else:
            expected.append((side, text, calls))
        called = calls[-1][0] if calls else called
    if openhands_turns(renderings["openhands"]) != expected:
        problems.append("openhands' turns are not openai's")
    return problems
