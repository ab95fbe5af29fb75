"""What a line of Selenium code does to its element: click it, type into it or select an option."""

from __future__ import annotations

import re

from bigaction_assets.sources.base import RecordRejected

_STRING = r"""\(\s*(?:r|u)?(["'])((?:\\.|(?!\1).)*)\1"""
_SELECT = re.compile(r"\.select_by_(?:visible_text|value)" + _STRING)
_SELECT_INDEX = re.compile(r"\.select_by_index\(\s*(\d+)\s*\)")
_SEND_KEYS = re.compile(r"\.send_keys" + _STRING)
_CLICK = re.compile(r"\.click\(\s*\)")


def _unescape(literal: str) -> str:
    """A Python string literal's text: escaped quotes, backslashes and newlines undone."""
    escapes = {"n": "\n", "t": "\t"}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(1)), literal)


def selenium_operation(code: str) -> tuple[str, str]:
    """(op, value) of the Selenium call: SELECT by text/value/index, TYPE by send_keys, CLICK."""
    for pattern, op in ((_SELECT, "SELECT"), (_SEND_KEYS, "TYPE")):
        found = pattern.search(code)
        if found:
            return op, _unescape(found.group(2))
    found = _SELECT_INDEX.search(code)
    if found:
        return "SELECT", found.group(1)
    if _CLICK.search(code):
        return "CLICK", ""
    raise RecordRejected("invalid_value", f"no click, send_keys or select_by_* call in {code!r}")
