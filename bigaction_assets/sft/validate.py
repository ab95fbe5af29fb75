"""Checks that a rendered example is what its consumer accepts; each returns a list of problems."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from bigaction_assets.sft.openhands_format import parse_function_blocks
from bigaction_assets.sft.sharegpt_format import GPT_SIDE, HUMAN_SIDE

OPENAI_ROLES = ("system", "user", "assistant", "tool")


# Texts found valid, by what they were checked for: a call's arguments, its function_call
# value and the tools appear in every window of an episode and are parsed once.
_VALID_REMEMBERED = 65_536
_valid: set[tuple[str, str]] = set()


def _holds(kind: str, text: Any, check: Callable[[Any], bool]) -> bool:
    """Whether `text` is JSON whose value passes `check`, remembering the texts that do."""
    if not isinstance(text, str):
        return False
    if (kind, text) in _valid:
        return True
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    if not check(value):
        return False
    if len(_valid) >= _VALID_REMEMBERED:
        _valid.clear()
    _valid.add((kind, text))
    return True


def _is_call(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"name", "arguments"}
        and isinstance(value["arguments"], dict)
    )


def _is_calls(value: Any) -> bool:
    return all(_is_call(call) for call in value) if isinstance(value, list) else _is_call(value)


def _is_tools(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, dict) and "name" in t for t in value)


def openai_problems(example: dict[str, Any]) -> list[str]:
    """Roles valid, each tool result answers an earlier call, arguments are JSON objects."""
    problems: list[str] = []
    calls_made: set[str] = set()
    for position, message in enumerate(example.get("messages", [])):
        role = message.get("role")
        if role not in OPENAI_ROLES:
            problems.append(f"message {position}: unknown role {role!r}")
        for call in message.get("tool_calls") or []:
            if call.get("type") != "function" or not call.get("id"):
                problems.append(f"message {position}: tool call without id or type function")
            arguments = call.get("function", {}).get("arguments")
            if not _holds("object", arguments, lambda value: isinstance(value, dict)):
                problems.append(f"message {position}: arguments are not a JSON object")
            calls_made.add(call.get("id"))
        if role == "tool" and message.get("tool_call_id") not in calls_made:
            problems.append(f"message {position}: tool_call_id answers no earlier call")
    if not isinstance(example.get("tools"), list):
        problems.append("tools is not a list")
    return problems


def sharegpt_problems(
    example: dict[str, Any], thought_words: tuple[str, str] | None = None
) -> list[str]:
    """Human/observation at even indexes, gpt/function_call at odd ones, an even count,
    function_call values `{name, arguments}` JSON, tools a JSON list in a string."""
    problems: list[str] = []
    entries = example.get("conversations", [])
    if not entries or len(entries) % 2:
        problems.append(f"{len(entries)} messages: LLaMA-Factory needs a non-zero even count")
    for position, entry in enumerate(entries):
        allowed = HUMAN_SIDE if position % 2 == 0 else GPT_SIDE
        if entry.get("from") not in allowed:
            problems.append(f"message {position}: {entry.get('from')!r} not in {allowed}")
        if not isinstance(entry.get("value"), str):
            problems.append(f"message {position}: value is not text")
        elif entry.get("from") == "function_call":
            value = entry["value"]
            if thought_words is not None and value.startswith(thought_words[0]):
                value = value.split(thought_words[1], 1)[-1]
            if not _holds("calls", value, _is_calls):
                problems.append(f"message {position}: function_call is not {{name, arguments}}")
    if not _holds("tools", example.get("tools", ""), _is_tools):
        problems.append("tools is not a JSON string holding a list of functions")
    if not isinstance(example.get("system", ""), str):
        problems.append("system is not text")
    return problems


def openhands_problems(example: dict[str, Any], parse: bool = True) -> list[str]:
    """Human and gpt alternate and every function block in a gpt message parses back (with
    `parse` false, at most one block opens in it: the stage checks the calls it renders from
    with `markup_problems` instead of parsing its own text again)."""
    problems: list[str] = []
    for position, entry in enumerate(example.get("conversations", [])):
        expected = "human" if position % 2 == 0 else "gpt"
        if entry.get("from") != expected:
            problems.append(f"message {position}: {entry.get('from')!r}, expected {expected!r}")
        if entry.get("from") != "gpt":
            continue
        if not parse:
            if entry.get("value", "").count("<function=") > 1:
                problems.append(f"message {position}: more than one function call")
            continue
        try:
            calls = parse_function_blocks(entry.get("value", ""))
        except ValueError as exc:
            problems.append(f"message {position}: {exc}")
            continue
        if len(calls) > 1:
            problems.append(f"message {position}: {len(calls)} function calls, at most one allowed")
    return problems


PROBLEM_FINDERS = {
    "openai": openai_problems,
    "sharegpt": sharegpt_problems,
    "openhands": openhands_problems,
}


def rendering_problems(
    renderings: dict[str, dict[str, Any]], parse_blocks: bool = True
) -> list[str]:
    """Problems of one example's renderings (format name -> example), prefixed by format.

    The stage passes `parse_blocks=False`: it renders OpenHands blocks from calls it has
    checked (`openhands_format.markup_problems`), so it does not parse its own text back; the
    blocking check, reading the stored text, parses every block.
    """
    return [
        f"{name}: {problem}"
        for name, example in renderings.items()
        for problem in (
            openhands_problems(example, parse=parse_blocks)
            if name == "openhands"
            else PROBLEM_FINDERS[name](example)
        )
    ]


def example_problems(renderings: dict[str, str | bytes]) -> list[str]:
    """Problems of one example's stored renderings (format name -> JSON text; None for a
    format that was not made)."""
    return rendering_problems(
        {name: orjson.loads(text) for name, text in renderings.items() if text is not None}
    )
