"""Content hashes used as keys across the lake."""

from __future__ import annotations

import hashlib
from typing import Any


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class EncodedRow(dict[str, Any]):
    """A row whose long text values also come as their UTF-8, encoded already for another
    purpose: `validated_table` hands those bytes to Arrow, which otherwise encodes each string
    again (a page of any non-ASCII character is transcoded, and its UTF-8 then cached on the
    string for as long as it lives). To every other reader it is a dict.

    The bytes are kept with the very string they were encoded from, and given out only while
    the row still holds that string: a value put in its place (a scrubbed page, say), by any
    means, is stored as itself."""

    __slots__ = ("_utf8",)

    def __init__(self, values: dict[str, Any], utf8: dict[str, bytes]) -> None:
        super().__init__(values)
        self._utf8 = {name: (values[name], encoded) for name, encoded in utf8.items()}

    def carries(self, name: str) -> bool:
        """Whether the row came with `name`'s UTF-8."""
        return name in self._utf8

    def utf8_of(self, name: str) -> bytes | None:
        """`name`'s UTF-8, if the row still holds the string it was encoded from."""
        kept = self._utf8.get(name)
        if kept is None or self.get(name) is not kept[0]:
            return None
        return kept[1]


def page_snapshot(raw_html: str | None, cleaned_html: str | None) -> dict[str, Any] | None:
    """A `dom_snapshots` row, keyed by the sha256 of raw_html (cleaned_html when it is all
    there is); None when there is no page at all. Encodes the page once for key and size, and
    keeps that UTF-8 for the lake's writer (`EncodedRow`)."""
    if raw_html is None and cleaned_html is None:
        return None
    keyed, column = (
        (raw_html, "raw_html") if raw_html is not None else (cleaned_html, "cleaned_html")
    )
    assert keyed is not None
    try:
        encoded = keyed.encode("utf-8")
        utf8 = {column: encoded}
    except UnicodeEncodeError:  # a lone surrogate: keyed as ever, but not text Arrow can store
        encoded = keyed.encode("utf-8", errors="surrogatepass")
        utf8 = {}
    values = {
        "html_sha": hashlib.sha256(encoded).hexdigest(),
        "raw_html": raw_html,
        "cleaned_html": cleaned_html,
        "raw_bytes": len(encoded) if raw_html is not None else 0,
    }
    return EncodedRow(values, utf8)
