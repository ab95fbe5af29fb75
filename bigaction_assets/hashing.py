"""Content hashes used as keys across the lake."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from bigaction_assets.encoded_row import EncodedRow
from bigaction_assets.page_cuts import MIN_CUT_BYTES


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def page_snapshot(
    raw_html: str | None, cleaned_html: str | None, literals: bool = True
) -> dict[str, Any] | None:
    """A `dom_snapshots` row, keyed by the sha256 of raw_html (cleaned_html when it is all
    there is); None when there is no page at all. Encodes the page once for key and size, and
    keeps that UTF-8 for the lake's writer (`EncodedRow`); a long page also as the JSON string
    the raw step looks for in its record (`page_cuts`), written first: orjson leaves the
    page's UTF-8 cached on the string, which makes the encoding after it a copy. Without
    `literals` (a source whose records are never cut: people's, never staged), not."""
    if raw_html is None and cleaned_html is None:
        return None
    keyed, column = (
        (raw_html, "raw_html") if raw_html is not None else (cleaned_html, "cleaned_html")
    )
    assert keyed is not None
    as_json = {
        name: written
        for name, value in (("raw_html", raw_html), ("cleaned_html", cleaned_html))
        if literals and (written := json_literal(value)) is not None
    }
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
    return EncodedRow(values, utf8, as_json)


def json_literal(page: str | None) -> bytes | None:
    """A page long enough to be cut out of its record, as orjson writes it (None otherwise, and
    for a lone surrogate, which it does not write)."""
    if page is None or len(page) < MIN_CUT_BYTES // 4:
        return None
    try:
        written = orjson.dumps(page)
    except orjson.JSONEncodeError:
        return None
    return written if len(written) >= MIN_CUT_BYTES else None
