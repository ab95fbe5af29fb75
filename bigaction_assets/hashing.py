"""Content hashes used as keys across the lake."""

from __future__ import annotations

import hashlib
from typing import Any

from bigaction_assets.encoded_row import EncodedRow


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


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
