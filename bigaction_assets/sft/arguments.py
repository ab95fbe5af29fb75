"""Decoding an action's `kwargs` into real JSON arguments (ADP stores Python-literal strings)."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from bigaction_assets.sft.tools import ToolSpec, json_type

MAX_LITERAL_CHARS = 100_000  # literal_eval is safe but not cheap; longer values stay as text
NOT_A_LITERAL = object()


# The literals ADP writes almost always: a quoted string without escapes, a decimal integer.
# (No backslash, newline, carriage return or NUL inside: Python reads those differently.)
_PLAIN_STRING = re.compile(r'"([^"\\\n\r\x00]*)"|\'([^\'\\\n\r\x00]*)\'')
_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# What can open a literal: quotes, signs, digits, a dot, brackets, or one of these names.
_LITERAL_OPENERS = frozenset("\"'+-.0123456789[({")
_LITERAL_NAMES = re.compile(r"True|False|None|set\(|[rRbBuU]{1,2}[\"']")
# Blanks, comments and line continuations, which Python skips before the first token.
# Python's tokenizer takes \r\n, \r and \n alike as the end of a line, also after a backslash.
_LEADING_NOISE = re.compile(r"(?:[ \t\r\n\x0c]+|#[^\r\n]*|\\(?:\r\n|\r|\n))*")


def python_literal(text: str) -> Any:
    """The value a Python literal string denotes, or `NOT_A_LITERAL` if it is not one.

    Gives exactly what `ast.literal_eval` gives, without its cost (it compiles the text) in
    the common cases: plain quoted strings and integers are read directly, and text whose
    first token cannot open a literal (a path, a command, a sentence, code) is refused without
    compiling it — most non-literal arguments are code or prose that would only fail to parse.
    """
    if len(text) > MAX_LITERAL_CHARS:
        return NOT_A_LITERAL
    plain = _PLAIN_STRING.fullmatch(text)
    if plain:
        return plain.group(1) if plain.group(1) is not None else plain.group(2)
    if len(text) < 4000 and _INTEGER.fullmatch(text):  # longer: Python's int digit limit applies
        return int(text)
    first = _LEADING_NOISE.match(text).end()
    if first == len(text):
        return NOT_A_LITERAL
    if text[first] not in _LITERAL_OPENERS and not _LITERAL_NAMES.match(text, first):
        return NOT_A_LITERAL
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NOT_A_LITERAL


def loosely_quoted(text: str) -> Any:
    """The text inside the double quotes ADP put around a value without escaping it, or
    `NOT_A_LITERAL`.

    Some ADP converters quote every string argument as `'"' + value + '"'`, so a value holding
    a newline or a double quote of its own (an edit's replacement text, a delegated task in
    JSON) is not a Python literal. Read only after `python_literal` refused the text.
    """
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return NOT_A_LITERAL


def _fits(value: Any, declared: str | list[str] | None) -> bool:
    if declared is None:
        return json_type(value) is not None
    allowed = [declared] if isinstance(declared, str) else declared
    actual = json_type(value)
    return actual in allowed or (actual == "integer" and "number" in allowed)


def decode_arguments(kwargs: str | None, spec: ToolSpec | None = None) -> dict[str, Any]:
    """An action's arguments as JSON values.

    ADP writes every web argument as a Python literal (`{"bid": "\\"93\\""}`), while other
    sources (SWE-smith's editor, Mind2Web) give plain values. A call is treated as
    literal-encoded only when every string argument parses as a literal or is wrapped in
    double quotes (`loosely_quoted`); a decoded value is kept only if it fits the type the
    spec declares, so `"8635"` stays a string id.

    Args:
        kwargs: The event's `kwargs` column (a JSON object as text), or None.
        spec: The function's spec, if known, to check decoded types against.
    """
    if not kwargs:
        return {}
    try:
        raw = json.loads(kwargs)
    except json.JSONDecodeError:
        return {"input": kwargs}
    if not isinstance(raw, dict):
        return {"input": raw}
    present = {key: value for key, value in raw.items() if value is not None}
    literals = {}
    for key, value in present.items():
        if isinstance(value, str):
            literal = python_literal(value)
            if literal is NOT_A_LITERAL:
                literal = loosely_quoted(value)
            if literal is NOT_A_LITERAL:
                return present  # one plain argument: the call was not literal-encoded
            literals[key] = literal
    decoded: dict[str, Any] = {}
    for key, value in present.items():
        literal = literals.get(key, NOT_A_LITERAL)
        if literal is not NOT_A_LITERAL:
            literal = _jsonable(literal)
        declared = spec.parameter_type(key) if spec is not None else None
        if literal is not NOT_A_LITERAL and literal is not None and _fits(literal, declared):
            decoded[key] = literal
        else:
            decoded[key] = value
    return decoded


def _jsonable(value: Any) -> Any:
    """Tuples and sets from a literal become lists, so the value is plain JSON."""
    if isinstance(value, tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, bytes | complex):
        return str(value)
    return value
