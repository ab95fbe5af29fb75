"""The exact, slow path of the array reader: the standard library's scanner, and where a broken
element ends, over a Latin-1 reading of the bytes (one character per byte)."""

from __future__ import annotations

import json
import re

_STRUCTURAL = re.compile(r'["\[\]{},]')
_STRING_BODY = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def element_end(text: str, start: int) -> int | None:
    """End of a broken element: its brackets closed, or a `,`/`]` at its own level.

    None when the text runs out first (the element continues past the window, or the file
    was cut off). Strings are skipped whole, so brackets inside them do not count.
    """
    depth = 0
    pos = start
    while True:
        match = _STRUCTURAL.search(text, pos)
        if match is None:
            return None
        char, at = match.group(), match.start()
        if char == '"':
            closing = _STRING_BODY.match(text, at + 1)
            if closing is None:
                return None
            pos = closing.end()
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:  # the closer ends the array, or is itself the stray element
                return at if at > start else at + 1
            depth -= 1
            if depth == 0:
                return at + 1
        elif depth == 0:  # a comma at the element's own level
            return at
        pos = at + 1
