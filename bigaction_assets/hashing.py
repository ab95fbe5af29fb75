"""Content hashes used as keys across the lake."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from bigaction_assets.encoded_row import EncodedRow
from bigaction_assets.page_cuts import long_literal

# Whether the pages made here are about to be cut out of their records (the raw step's one
# pass, `staging.read_and_stage`): only then is each worth writing as JSON too.
_FOR_CUTTING: ContextVar[bool] = ContextVar("pages_for_cutting", default=False)


@contextmanager
def pages_for_cutting() -> Iterator[None]:
    """Within it, `page_snapshot` also writes each long page as the JSON string its record holds
    (for `page_cuts`), first: orjson then leaves the page's UTF-8 cached on the string, which
    makes the encoding of its key a copy."""
    token = _FOR_CUTTING.set(True)
    try:
        yield
    finally:
        _FOR_CUTTING.reset(token)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def page_snapshot(raw_html: str | None, cleaned_html: str | None) -> dict[str, Any] | None:
    """A `dom_snapshots` row, keyed by the sha256 of raw_html (cleaned_html when it is all
    there is); None when there is no page at all. Encodes the page once for key and size, and
    keeps that UTF-8 for the lake's writer (`EncodedRow`); within `pages_for_cutting`, a long
    page also as the JSON string its record holds (`page_cuts`)."""
    if raw_html is None and cleaned_html is None:
        return None
    keyed, column = (
        (raw_html, "raw_html") if raw_html is not None else (cleaned_html, "cleaned_html")
    )
    assert keyed is not None
    as_json = {
        name: written
        for name, value in (("raw_html", raw_html), ("cleaned_html", cleaned_html))
        if _FOR_CUTTING.get() and (written := long_literal(value)) is not None
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
