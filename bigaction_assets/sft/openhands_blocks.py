"""OpenHands' `<function=...>` call blocks as OpenHands reads them: written, read and checked."""

from __future__ import annotations

import json
import re
from typing import Any

# The reading rules are OpenHands' (openhands/llm/fn_call_converter.py,
# convert_non_fncall_messages_to_fncall_messages and _extract_and_validate_params): an
# assistant message's call is its first `<function=NAME>` + newline ... `</function>` (to the
# nearest closing tag), each parameter `<parameter=NAME>` ... `</parameter>` (to the nearest
# closing tag, the value stripped), the thought is the text before the first `<function=`,
# and anything else in the message is ignored. Generation stops at `</function` (its
# STOP_WORDS), so a model must never be taught to write that inside a block.
FUNCTION_OPEN = "<function="
PARAMETER_CLOSE = "</parameter>"
STOP_WORD = "</function"
_FUNCTION = re.compile(r"<function=([^>]+)>\n(.*?)</function>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>]+)>(.*?)</parameter>", re.DOTALL)
# A finish an agent wrote as text: `<function=finish>` without the `</function>` that the stop
# word cut (SWE-Play), or parameters inside NNetNav-style `<finish>...</finish>`.
_WRITTEN_FINISH = re.compile(
    r"^\s*(?:<function=finish>\n(.*?)(?:</function>)?|<finish>(.*)</finish>)\s*$", re.DOTALL
)


def parameter_text(value: Any) -> str:
    """A value as a block shows it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def block_text(name: str, arguments: dict[str, Any]) -> str:
    """`<function=NAME>` then one `<parameter=KEY>` per argument, its value on lines of its own."""
    parameters = "".join(
        f"<parameter={key}>\n{parameter_text(value)}\n</parameter>\n"
        for key, value in arguments.items()
    )
    return f"<function={name}>\n{parameters}</function>"


def unwritable(name: str, arguments: dict[str, Any], thought: str) -> list[str]:
    """Why a call (with the assistant text before it) cannot be written as a block that OpenHands
    reads back as that call, or that a model could write whole: empty list when it can."""
    problems = []
    for label in (name, *arguments):
        if not label or ">" in label:
            problems.append(f"name {label!r} is empty or holds '>'")
    for key, value in arguments.items():
        text = parameter_text(value)
        if PARAMETER_CLOSE in text:
            problems.append(f"{name}.{key} holds {PARAMETER_CLOSE}, which would end it early")
        if STOP_WORD in text:
            problems.append(f"{name}.{key} holds {STOP_WORD}, OpenHands' stop word")
    problems += text_problems(thought, f"the text before {name}")
    return problems


def text_problems(text: str, what: str) -> list[str]:
    """Why assistant text outside any block would be misread (as a call, or cut at the stop
    word)."""
    return [f"{what} holds {mark}" for mark in (FUNCTION_OPEN, STOP_WORD) if mark in text]


def read_message(text: str) -> tuple[str, tuple[str, dict[str, str]] | None]:
    """(thought, (name, parameters) or None) of an assistant message, read by OpenHands' rules.

    Raises:
        ValueError: what OpenHands would misread: a block that is not closed, text after the
            block, text in a block outside its parameters, or the stop word inside a block.
    """
    if FUNCTION_OPEN not in text:
        return text.strip(), None
    thought = text.split(FUNCTION_OPEN, 1)[0].strip()
    found = _FUNCTION.search(text)
    if found is None or found.start() != len(text.split(FUNCTION_OPEN, 1)[0]):
        raise ValueError("a <function=...> block is not closed by </function>")
    if text[found.end() :].strip():
        raise ValueError(f"text after the call: {text[found.end() :].strip()[:80]!r}")
    name, body = found.group(1), found.group(2)
    if STOP_WORD in body:
        raise ValueError(f"function {name} holds {STOP_WORD}, OpenHands' stop word")
    parameters = {m.group(1): m.group(2).strip() for m in _PARAMETER.finditer(body)}
    leftover = _PARAMETER.sub("", body).strip()
    if leftover:
        raise ValueError(f"function {name} has text outside its parameters: {leftover[:80]!r}")
    return thought, (name, parameters)


def written_finish(text: str) -> dict[str, str] | None:
    """The parameters of a finish call an agent wrote as text (see `_WRITTEN_FINISH`), when the
    text is that call and nothing else; None otherwise."""
    found = _WRITTEN_FINISH.match(text)
    if found is None:
        return None
    body = found.group(1) if found.group(1) is not None else found.group(2)
    parameters = {m.group(1): m.group(2).strip() for m in _PARAMETER.finditer(body)}
    if not parameters or _PARAMETER.sub("", body).strip():
        return None
    return parameters
