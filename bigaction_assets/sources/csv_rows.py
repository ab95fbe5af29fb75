"""Stream the rows of a CSV file with a header as JSON records, one row in memory at a time."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson

from bigaction_assets.sources.raw_text import IdReader, RawText

# A row holds whole pages: the csv module's default cap (128 KiB per field) would refuse them.
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class _Lines:
    """The file's lines as text for `csv.reader`, remembering the bytes, the first line number
    and the offset of the lines handed over since the last `take`. The reader asks for a line
    only when the record it parses needs one, so those lines are exactly one record's."""

    def __init__(self, handle: BinaryIO) -> None:
        self.handle = handle
        self.offset = 0
        self.line = 0
        self.start: tuple[int, int] | None = None  # (line, offset) of the pending record
        self.pending: list[bytes] = []

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        raw = self.handle.readline()
        if not raw:
            raise StopIteration
        if self.offset == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw, self.offset = raw[3:], 3
        if self.start is None:
            self.start = (self.line + 1, self.offset)
        self.line += 1
        self.offset += len(raw)
        self.pending.append(raw)
        # undecodable bytes survive as surrogates, so the row can be rejected as invalid_utf8
        return raw.decode("utf-8", errors="surrogateescape")

    def take(self) -> tuple[int, int, bytes]:
        """Line, byte offset and bytes of the record just parsed."""
        line, offset = self.start or (self.line, self.offset)
        data = b"".join(self.pending)
        self.start, self.pending = None, []
        return line, offset, data


def _escaped(data: bytes) -> bytes:
    return data.decode("utf-8", errors="backslashreplace").encode("utf-8").rstrip()


def _bad_utf8(fields: list[str]) -> bool:
    try:
        for field in fields:
            field.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def iter_csv_records(path: Path, record_id: IdReader) -> Iterator[RawText]:
    """Every row after the header as a JSON object keyed by the header's names (all values are
    text). A row that is not CSV, whose field count differs from the header's, or that is not
    UTF-8 is a record with its error, and reading goes on at the next line."""
    with open(path, "rb") as handle:
        lines = _Lines(handle)
        reader = csv.reader(lines, strict=True)
        header: list[str] | None = None
        index = 0
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                line, offset, data = lines.take()
                reason = "truncated" if "unexpected end of data" in str(exc) else "malformed_csv"
                yield RawText(line, index, offset, _escaped(data), reason, f"{exc} (line {line})")
                index += 1
                if header is None:
                    return  # without a header no row can be read
                continue
            line, offset, data = lines.take()
            if not fields:  # a blank line holds no row
                continue
            if header is None:
                problem = _header_problem(fields)
                if problem is not None:
                    yield RawText(line, index, offset, _escaped(data), "malformed_csv", problem)
                    return
                header = fields
                continue
            yield _row(header, fields, line, index, offset, data, record_id)
            index += 1


def _header_problem(fields: list[str]) -> str | None:
    if _bad_utf8(fields):
        return "the header is not UTF-8"
    repeated = sorted({name for name in fields if fields.count(name) > 1})
    if repeated:
        return f"the header names columns {repeated} more than once"
    return None


def _row(
    header: list[str],
    fields: list[str],
    line: int,
    index: int,
    offset: int,
    data: bytes,
    record_id: IdReader,
) -> RawText:
    if _bad_utf8(fields):
        detail = f"line {line} holds bytes that are not UTF-8"
        return RawText(line, index, offset, _escaped(data), "invalid_utf8", detail)
    if len(fields) != len(header):
        detail = f"the row has {len(fields)} fields, the header {len(header)}"
        return RawText(line, index, offset, _escaped(data), "malformed_csv", detail)
    value = dict(zip(header, fields, strict=True))
    text = orjson.dumps(value)
    return RawText(line, index, offset, text, record_id=record_id(value), value=value)
