"""One record as it stands in a landing file: its exact bytes, where it starts, its own id and,
when it cannot be read, why; every source reader (JSON, JSON lines, CSV, Parquet) gives these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class _Unparsed:
    def __repr__(self) -> str:
        return "UNPARSED"


UNPARSED: Any = _Unparsed()


@dataclass(frozen=True, slots=True)
class RawText:
    """One record as it stands in a file.

    Attributes:
        line: line of the file where the record starts, from 1.
        record_index: position of the record in the file, from 0.
        byte_offset: where the record's first byte is.
        data: the record's UTF-8 bytes (undecodable bytes shown as escapes when `error` says
            so); `text` is the same, decoded.
        error: reason code when the record cannot be read: `invalid_utf8`, `truncated`,
            `malformed_json` (text that is not a JSON value where a record should be).
        error_detail: what was wrong, for a person.
        record_id: the record's own id, as the caller's `record_id` function reads it.
        value: the record parsed by orjson, when reading it took that anyway (else
            `UNPARSED`), so a caller standardizing in the same pass need not parse it again.
    """

    line: int
    record_index: int
    byte_offset: int
    data: bytes
    error: str | None = None
    error_detail: str | None = None
    record_id: str | None = None
    value: Any = field(default=UNPARSED, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


def check_utf8(raw: bytes) -> tuple[bytes, str | None, str | None]:
    """The record's bytes if they are UTF-8; else a readable copy, the error and its detail."""
    if raw.isascii():
        return raw, None, None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        detail = f"byte {exc.start} of the record is not UTF-8 ({raw[exc.start : exc.start + 4]!r})"
        return _escaped(raw), "invalid_utf8", detail
    return raw, None, None


def _escaped(raw: bytes) -> bytes:
    return raw.decode("utf-8", errors="backslashreplace").encode("utf-8")


IdReader = Callable[[Any], str | None]
