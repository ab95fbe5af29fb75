"""Stream records out of JSON-array and JSON-lines files with their exact text and location.

Files can be gigabytes, so nothing here loads a whole file: a JSON array is read in chunks and
cut into its top-level elements by orjson where it can vouch for them (`jsoncut`), else by the
standard library's C scanner, which also says exactly what is wrong with a broken element; each
element's own text is kept untouched. Whatever cannot be read becomes a record with an error
code, so the caller can reject it with its location instead of crashing or dropping it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from bigaction_assets.sources.jsoncut import MORE, Buffer, cut_value
from bigaction_assets.sources.jsonscan import DECODER, element_end
from bigaction_assets.sources.jsonwindow import ByteWindow
from bigaction_assets.sources.raw_text import UNPARSED, IdReader, RawText, check_utf8

CHUNK_BYTES = 16 * 1024 * 1024
_WHITESPACE = b" \t\r\n"
# What `[\s,]*` skips in a Latin-1 reading of the bytes, as the slow path always read them.
_SEPARATORS = re.compile(rb"[\t\n\x0b\x0c\r\x1c-\x20\x85\xa0,]*")


def _first_significant_byte(handle: BinaryIO) -> bytes:
    head = handle.read(4096)
    handle.seek(0)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    stripped = head.lstrip(_WHITESPACE)
    return stripped[:1]


def _no_id(value: Any) -> str | None:
    return None


def iter_json_records(path: Path, record_id: IdReader = _no_id) -> Iterator[RawText]:
    """Records of a `.json` array (or of a JSON-lines file, whatever its extension).

    Args:
        record_id: reads a record's own id from its parsed value (None when it has none).
    """
    with open(path, "rb") as handle:
        if _first_significant_byte(handle) == b"[":
            yield from _iter_array(handle, record_id)
        else:
            yield from _iter_lines(handle, record_id)


def iter_jsonl_records(path: Path, record_id: IdReader = _no_id) -> Iterator[RawText]:
    with open(path, "rb") as handle:
        yield from _iter_lines(handle, record_id)


def _iter_lines(handle: BinaryIO, record_id: IdReader) -> Iterator[RawText]:
    offset = 0
    index = 0
    for line_no, raw in enumerate(handle, start=1):
        body = raw.lstrip(_WHITESPACE)
        if body.startswith(b"\xef\xbb\xbf"):
            body = body[3:]
        start = offset + len(raw) - len(body)  # the record's first byte, not the line's
        body = body.rstrip(_WHITESPACE)
        if body:
            data, error, detail = check_utf8(body)
            identity = None
            value = UNPARSED
            if error is None and not raw.endswith(b"\n") and not _looks_closed(body):
                error, detail = "truncated", "the file ends inside this record"
            elif error is None:
                try:
                    value = orjson.loads(body)
                    identity = record_id(value)
                except orjson.JSONDecodeError as exc:
                    error, detail = "malformed_json", str(exc)
            yield RawText(line_no, index, start, data, error, detail, identity, value)
            index += 1
        offset += len(raw)


def _looks_closed(body: bytes) -> bool:
    """Whether a last line without a newline could be a whole JSON value."""
    return body.endswith((b"}", b"]", b'"', b"true", b"false", b"null")) or body[-1:].isdigit()


def _iter_array(handle: BufferedIOBase, record_id: IdReader) -> Iterator[RawText]:
    window = ByteWindow(handle, CHUNK_BYTES)
    while b"[" not in window.data:  # a BOM or whitespace may fill the first chunks
        if not window.more(len(window.data)):
            return
    pos = window.data.index(b"[") + 1
    index = 0
    hint = 0  # length of the last element, to guess the next one's
    closed = False  # past the array's closing bracket: what follows is read, and refused
    while True:
        pos = _after_separators(window.data, pos)
        if pos >= len(window.data):
            if window.more(pos):
                pos = 0
                continue
            return  # no closing bracket, but every record before the cut was whole
        if window.data[pos] == ord("]"):
            if closed:  # a stray bracket after the end: a record of its own
                yield _record(window, pos, b"]", index, "malformed_json", AFTER_THE_ARRAY)
                index += 1
            closed = True
            pos += 1
            continue
        cut = cut_value(window.data, pos, window.eof, hint)
        if cut == MORE:
            window.more(pos, at_least=2 * (len(window.data) - pos))
            pos = 0
            continue  # at the end of the file, `cut_value` is asked again knowing it
        if isinstance(cut, tuple):
            end, value = cut
            yield _refused(_parsed_element(window, pos, end, index, value, record_id), closed)
            hint = end - pos
            index += 1
            pos = end
            continue
        # The slow, exact path: the standard library's scanner says what is wrong, and how far.
        stop: int | None  # where the element ends, if the scanner found it
        try:
            value, stop = DECODER.raw_decode(window.text, pos)
            complete = stop < len(window.data) or window.eof
            error = None
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            stop = element_end(window.text, pos)
            complete = stop is not None
            value, error = None, exc
        if not complete:  # the element runs past the window: read on and parse it again
            grew = window.more(pos, at_least=2 * (len(window.data) - pos))
            stop = None if stop is None else stop - pos
            pos = 0
            if grew:
                continue
            if stop is None:
                data, _, _ = check_utf8(window.take(pos, len(window.data)))
                cut_off = "the file ends inside this record"
                yield _refused(_record(window, pos, data, index, "truncated", cut_off), closed)
                return
        assert stop is not None  # complete, or the file ended and the scanner found the end
        yield _refused(_element(window, pos, stop, index, value, error, record_id), closed)
        index += 1
        pos = stop


AFTER_THE_ARRAY = "this text follows the closing bracket of the file's array"


def _after_separators(data: Buffer, pos: int) -> int:
    """The first position at or after `pos` that is no separator (the pattern matches the
    empty string, so it always matches)."""
    found = _SEPARATORS.match(data, pos)
    return pos if found is None else found.end()


def _refused(raw: RawText, closed: bool) -> RawText:
    """A record as read, or, after the array has closed, the same text refused: it is no
    element of the array (a second array, JSON lines after one), and is not dropped either."""
    if not closed:
        return raw
    detail = AFTER_THE_ARRAY + (f"; {raw.error_detail}" if raw.error_detail else "")
    return RawText(raw.line, raw.record_index, raw.byte_offset, raw.data, "malformed_json", detail)


def _parsed_element(
    window: ByteWindow, start: int, end: int, index: int, value: Any, record_id: IdReader
) -> RawText:
    """An element orjson parsed: valid UTF-8 and JSON, its value read from the right bytes."""
    line, offset = window.locate(start)
    window.passed(start, end)
    data = window.take(start, end)
    return RawText(line, index, offset, data, record_id=record_id(value), value=value)


def _element(
    window: ByteWindow,
    start: int,
    end: int,
    index: int,
    value: Any,
    error: Exception | None,
    record_id: IdReader,
) -> RawText:
    data, utf8_error, utf8_detail = check_utf8(window.take(start, end))
    if utf8_error is not None:
        return _record(window, start, data, index, utf8_error, utf8_detail)
    if isinstance(error, json.JSONDecodeError):
        detail = f"{error.msg} at byte {error.pos - start} of the record"
        return _record(window, start, data, index, "malformed_json", detail)
    if error is not None:
        return _record(window, start, data, index, "malformed_json", str(error))
    line, offset = window.locate(start)
    # The scan read bytes as Latin-1, so a non-ASCII string in `value` is mis-decoded; an ASCII
    # id cannot be (a byte >= 0x80 would show as a non-ASCII character), so only a non-ASCII
    # id needs the record parsed again as UTF-8.
    identity = record_id(value)
    if identity is not None and not identity.isascii():
        # with the scanner that accepted it: orjson refuses what it takes (a lone surrogate)
        identity = record_id(DECODER.decode(data.decode("utf-8")))
    return RawText(line, index, offset, data, record_id=identity)


def _record(
    window: ByteWindow, start: int, data: bytes, index: int, error: str, detail: str | None
) -> RawText:
    line, offset = window.locate(start)
    return RawText(line, index, offset, data.rstrip(), error, detail)
