"""Reading ADP's own OpenHands SFT output as calls, and the named ways ours may differ from it.

ADP writes each call as an OpenHands block; some blocks host another call as text (a browser
action in `browser(code=...)`, a dataset's function in `execute_ipython_cell(code=...)` or
`execute_bash(command=...)`), written `name(key=value, ...)` with each value as the standardized
data holds it (a Python literal, or text in double quotes it did not escape). `normalize` takes
an ADP call towards ours one named step at a time, so a test can say which differences it met.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bigaction_assets.sft.arguments import NOT_A_LITERAL, loosely_quoted, python_literal
from bigaction_assets.sft.openhands_blocks import parameter_text

Call = tuple[str, dict[str, Any]]
HOSTS = {"browser": "code", "execute_ipython_cell": "code", "execute_bash": "command"}
FINISH = "finish"
# What ADP's raw-to-standardized scripts append when a trajectory has no closing message, drawn
# with an unseeded `random.choice`, so two runs of a script close the same record differently.
STOCK_CLOSINGS = frozenset({
    "I have successfully completed the task.",
    "I did it! The task is now complete.",
    "The objective has been achieved with no outstanding issues.",
    "I have fulfilled all the requirements of the task.",
    "I've wrapped up the task successfully.",
})  # fmt: skip
_BLOCK = re.compile(r"<function=([^>\s]+)>(.*?)</function>", re.DOTALL)
_UNCLOSED = re.compile(r"^\s*<function=([^>\s]+)>\s*(.*)$", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?</parameter>", re.DOTALL)
_LANGUAGE_CALL = re.compile(r'^(\w+)\("(.*)"\)$', re.DOTALL)


@dataclass
class AdpRecord:
    """An ADP SFT record's calls in order, each call's block text, and the text of a closing
    assistant message that made no call (ADP leaves one without `<finish>` as text)."""

    calls: list[Call]
    blocks: list[str]
    final_text: str | None


def parse_function_blocks(text: str) -> list[tuple[str, dict[str, str]]]:
    """Every block of an ADP message, as (name, parameter texts), one newline around each value
    taken off as ADP's converter puts it there; raises where a block is not closed or holds
    text outside its parameters (markup inside a value)."""
    blocks = [(m.group(1), m.group(2)) for m in _BLOCK.finditer(text)]
    if text.count("<function=") != len(blocks):
        raise ValueError("a <function=...> block is not closed by </function>")
    calls = []
    for name, body in blocks:
        if _PARAMETER.sub("", body).strip():
            raise ValueError(f"function {name} has text outside its parameters")
        calls.append((name, {m.group(1): m.group(2) for m in _PARAMETER.finditer(body)}))
    return calls


def adp_record(record: dict[str, Any]) -> AdpRecord:
    roles = ("gpt", "function_call")
    assistant = [e["value"] for e in record["conversations"] if e["from"] in roles]
    read = AdpRecord([], [], None)
    for position, value in enumerate(assistant):
        blocks = list(_BLOCK.finditer(value))
        try:
            calls = [(name, dict(params)) for name, params in parse_function_blocks(value)]
        except ValueError:
            if blocks:  # markup inside a value: the blocks are there, their parameters unclear
                calls = [(block.group(1), {}) for block in blocks]
            elif position < len(assistant) - 1:
                raise
            else:  # a block cut short: only the closing message may hold one, as text
                calls = []
        read.calls.extend(calls)
        read.blocks.extend(block.group(0) for block in blocks)
        if not calls and position == len(assistant) - 1:
            read.final_text = value
    return read


def adp_layout(call: Call) -> str:
    """A call as ADP's converter writes its block: each value on lines of its own."""
    name, params = call
    body = "".join(
        f"<parameter={key}>\n{parameter_text(value)}\n</parameter>\n"
        for key, value in params.items()
    )
    return f"<function={name}>\n{body}</function>"


def value_of(text: str) -> Any:
    """A value as ADP wrote it in a hosted call: a literal, quoted text, or bare text."""
    for read in (python_literal, loosely_quoted):
        value = read(text)
        if value is not NOT_A_LITERAL:
            return value
    return text.strip()


def hosted_call(code: str, keys: list[str]) -> Call | None:
    """`name(k=v, ...)` as a call: by Python's parser where it is valid Python, else cut at
    the `, key=` of each of `keys` (our call's parameter names, in order)."""
    code = code.strip()
    try:
        [statement] = ast.parse(code).body
        call = statement.value  # type: ignore[attr-defined]
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args:
            return call.func.id, {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}
    except (SyntaxError, ValueError):
        pass
    opened = re.match(r"^(\w+)\((.*)\)$", code, re.DOTALL)
    if opened is None:
        return None
    name, body = opened.groups()
    arguments: dict[str, Any] = {}
    rest = body
    for position, key in enumerate(keys):
        if not rest.startswith(f"{key}="):
            return None
        rest = rest[len(key) + 1 :]
        following = f", {keys[position + 1]}=" if position + 1 < len(keys) else None
        cut = rest.find(following) if following else len(rest)
        if cut < 0:
            return None
        arguments[key], rest = value_of(rest[:cut]), rest[cut + 2 if following else cut :]
    return (name, arguments) if not rest else None


def unclosed_block(text: str) -> Call | None:
    """A block whose `</function>` was cut off, as a call (the text of a recorded call)."""
    match = _UNCLOSED.match(text)
    if match is None or "</function>" in text:
        return None
    return match.group(1), {m.group(1): m.group(2) for m in _PARAMETER.finditer(match.group(2))}


Step = Callable[[Call, Call, bool | None], Call | None]


def _host_wrapper(hosts: tuple[str, ...]) -> Step:
    def unwrap(theirs: Call, ours: Call, completed: bool | None) -> Call | None:
        name, params = theirs
        if name not in hosts or list(params) != [HOSTS[name]] or ours[0] == name:
            return None
        return hosted_call(params[HOSTS[name]], list(ours[1]))

    return unwrap


def _language_in_ipython(theirs: Call, ours: Call, completed: bool | None) -> Call | None:
    name, params = theirs
    if name != "execute_ipython_cell" or not ours[0].startswith("execute_"):
        return None
    match = _LANGUAGE_CALL.match(params.get("code", ""))
    if match is None or f"execute_{match.group(1)}" != ours[0]:
        return None
    return ours[0], {"code": match.group(2)}


def _task_completed_asserted(theirs: Call, ours: Call, completed: bool | None) -> Call | None:
    name, params = theirs
    if name != FINISH or "task_completed" not in params or completed is not None:
        return None
    return name, {k: v for k, v in params.items() if k != "task_completed"}


def _stock_closing(theirs: Call, ours: Call, completed: bool | None) -> Call | None:
    (name, params), (our_name, mine) = theirs, ours
    message, own = params.get("message"), mine.get("message")
    if name != FINISH or our_name != FINISH or message == own:
        return None
    if message in STOCK_CLOSINGS and own in STOCK_CLOSINGS:
        return name, {**params, "message": own}
    return None


STEPS: tuple[tuple[str, Step], ...] = (
    ("browser wrapper", _host_wrapper(("browser",))),
    ("api as code", _host_wrapper(("execute_ipython_cell", "execute_bash"))),
    ("other languages as ipython", _language_in_ipython),
    ("finish task_completed", _task_completed_asserted),
    ("stock closing", _stock_closing),
)


def normalize(theirs: Call, ours: Call, completed: bool | None) -> tuple[Call, list[str]]:
    """ADP's call after each step that applies to it, and the names of those steps."""
    used = []
    for name, step in STEPS:
        changed = step(theirs, ours, completed)
        if changed is not None:
            theirs, used = changed, [*used, name]
    return theirs, used
