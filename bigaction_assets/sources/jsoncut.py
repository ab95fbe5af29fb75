"""Cutting one JSON value out of a buffer with orjson, where orjson can vouch for where it ends."""

# A value that orjson parses whole is also where the standard library's scanner would end it (an
# object, array or string closes only at its last byte; a number is kept only when the byte after
# it cannot continue it), so a successful parse both finds a record's end and reads it. Whatever
# orjson will not vouch for (broken records, JSON orjson reads differently) goes back to the
# caller's slow, exact path.

from __future__ import annotations

from typing import Any, Final

import orjson

# Asked for more bytes: the value may run past the end of the buffer.
MORE: Final = "more"
# A value no longer than this is first tried as the rest of its line.
LINE_GUESS_BYTES = 1024 * 1024
# The first slice tried when the line is no guide; it grows fourfold until the value fits.
FIRST_TRY_BYTES = 64 * 1024
_JSON_SPACE = b" \t\r\n"
_AFTER_VALUE = frozenset(b" \t\r\n,]")
_TRAILING = "unexpected content after document"
_CUT_SHORT = "unexpected end of data"

Cut = tuple[int, Any]
# What the reader's window is: a bytearray, read into in place (`jsonwindow`); bytes also do.
Buffer = bytes | bytearray


def cut_value(buf: Buffer, start: int, eof: bool, hint: int = 0) -> Cut | str | None:
    """The end and parsed value of the array element starting at `buf[start]`.

    Args:
        buf: bytes of the file (the reader's window), the element's start among them.
        eof: whether `buf` runs to the end of the file.
        hint: length of the previous element, to guess this one's.

    Returns:
        `(end, value)`; `MORE` when the element may run past `buf`; None when orjson cannot
        vouch for it (not JSON to orjson, or cut by the end of the file).
    """
    newline = buf.find(b"\n", start)
    if 0 <= newline - start <= max(4 * hint, LINE_GUESS_BYTES):
        # One element per line, as most JSON-array writers that break lines leave it.
        end = _line_end(buf, start, newline)
        found = _parse(buf, start, end, len(buf))
        if found is not None:
            return found
    size = max(2 * hint, FIRST_TRY_BYTES)
    while True:
        stop = min(start + size, len(buf))
        if stop < len(buf):
            stop = _char_boundary(buf, start, stop)
        try:
            value = orjson.loads(memoryview(buf)[start:stop])
        except orjson.JSONDecodeError as exc:
            if exc.msg == _TRAILING:
                end = _strip_end(buf, start, start + _byte_position(exc))
                return _parse(buf, start, end, len(buf))
            if exc.msg != _CUT_SHORT:
                return None
            if stop < len(buf):
                size *= 4
                continue
            return None if eof else MORE
        end = _strip_end(buf, start, stop)
        if stop < len(buf) and buf[stop] not in _AFTER_VALUE:
            size *= 4  # a number the slice cut short
            continue
        if stop == len(buf) and not eof:
            return MORE  # a number may go on in the next block
        return end, value


def _line_end(buf: Buffer, start: int, newline: int) -> int:
    """Where the element ends if it fills the rest of its line, less a separator."""
    end = _strip_end(buf, start, newline)
    if end > start and buf[end - 1] in b",]":
        end = _strip_end(buf, start, end - 1)
    return end


def _strip_end(buf: Buffer, start: int, end: int) -> int:
    """`end`, moved back over JSON whitespace (without copying a megabyte line to strip it)."""
    while end > start and buf[end - 1] in _JSON_SPACE:
        end -= 1
    return end


def _parse(buf: Buffer, start: int, end: int, length: int) -> Cut | None:
    """`buf[start:end]` parsed, if it is exactly one value that nothing after it continues."""
    if end <= start or (end < length and buf[end] not in _AFTER_VALUE):
        return None
    try:
        return end, orjson.loads(memoryview(buf)[start:end])
    except orjson.JSONDecodeError:
        return None


def _byte_position(exc: orjson.JSONDecodeError) -> int:
    """orjson reports positions in characters; the caller counts bytes."""
    head = exc.doc[: exc.pos]
    return exc.pos if head.isascii() else len(head.encode("utf-8"))


def _char_boundary(buf: Buffer, start: int, stop: int) -> int:
    """`stop`, moved back so that it does not split a UTF-8 character."""
    while stop > start and buf[stop] & 0xC0 == 0x80:
        stop -= 1
    return stop
