"""Pages cut out of a raw record's text and put back, byte for byte.

A Mind2Web task holds its pages (hundreds of kilobytes each) as JSON strings inside the record,
and the lake keeps each page in `raw_pages` anyway. So the raw layer stores the record without
them: where a page's JSON literal stands in the record's bytes exactly as an encoder writes it
(orjson's UTF-8, or the standard library's ASCII with `\\u` escapes), those bytes are cut out
and the cut is noted as `[offset, html_sha, column, escaping]`, offset being where the literal
goes back in the cut text. Putting every literal back gives the record's bytes as they stood;
a page written any other way (say with `\\/` for `/`) stays where it is. Nothing here decides
what a record means: a cut is a splice of bytes, checked against the bytes it replaces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

PAGE_COLUMNS = ("raw_html", "cleaned_html")
# A shorter literal saves less than its note in `pages` costs to keep and read.
MIN_CUT_BYTES = 1024
UTF8, ASCII = "utf8", "ascii"
PIECE_BYTES = 64  # of a literal, searched for before the whole is compared where it stands
WINDOW_PAGES = 64  # pages a reader keeps at hand: a task's, whose rows need them out of order


class PagesMissing(ValueError):
    """A record's cut names a page that its partition's `raw_pages` does not hold."""


def literal(page: str, escaping: str) -> bytes:
    """The page as a JSON string literal, as the encoder that `escaping` names writes it."""
    if escaping == UTF8:
        return orjson.dumps(page)
    if escaping == ASCII:
        return json.encoder.encode_basestring_ascii(page).encode("ascii")  # type: ignore[attr-defined]
    raise ValueError(f"unknown escaping {escaping!r}")


def long_literal(page: object) -> bytes | None:
    """The page as orjson writes it as a JSON string, if long enough to be worth cutting out
    (None otherwise, and for a lone surrogate, which no encoder here writes)."""
    if not isinstance(page, str) or len(page) < MIN_CUT_BYTES // 4:
        return None
    try:
        written = orjson.dumps(page)
    except orjson.JSONEncodeError:
        return None
    return written if len(written) >= MIN_CUT_BYTES else None


def _literals(page: str, written: bytes | None) -> Iterator[tuple[str, bytes]]:
    """The literals `page` may stand as, likeliest first; `written`: orjson's, if at hand."""
    written = written or long_literal(page)
    if written is None:
        return
    yield UTF8, written
    if not page.isascii():  # else both encoders write the same bytes
        yield ASCII, literal(page, ASCII)


def cut_pages(text: bytes, pages: Iterable[Mapping[str, Any]]) -> tuple[bytes, str | None]:
    """`text` with the literals of `pages` (dom_snapshots rows) cut out, each wherever the
    record holds it, and the note of the cuts (JSON); `text` itself and None where no page
    stands in it as written."""
    spans: list[tuple[int, int, str, str, str]] = []  # start, end, sha, column, escaping
    found: list[tuple[bytes, str, str, str]] = []  # each literal cut, once
    cursor = 0
    for page in pages:
        for column in PAGE_COLUMNS:
            value = page.get(column)
            if not isinstance(value, str):
                continue
            take = getattr(page, "take_literal", None)
            for escaping, encoded in _literals(value, take(column) if take else None):
                start = _free_position(text, encoded, cursor, spans)
                if start >= 0:
                    spans.append((start, start + len(encoded), page["html_sha"], column, escaping))
                    found.append((encoded, page["html_sha"], column, escaping))
                    cursor = start + len(encoded)
                    break
    _cut_repeats(text, spans, found)
    if not spans:
        return text, None
    spans.sort()
    parts, cuts, kept, previous = [], [], 0, 0
    for start, end, sha, column, escaping in spans:
        parts.append(text[previous:start])
        kept += start - previous
        cuts.append([kept, sha, column, escaping])
        previous = end
    parts.append(text[previous:])
    return b"".join(parts), orjson.dumps(cuts).decode()


def _cut_repeats(
    text: bytes,
    spans: list[tuple[int, int, str, str, str]],
    found: list[tuple[bytes, str, str, str]],
) -> None:
    """Cut the literals found again where the record holds them again (a step that left the
    page as it was shows it twice), looking only in what is left between the cuts that a
    literal fits in: a search of the whole record for every page would cost more than the
    cuts save."""
    found.sort(key=lambda item: -len(item[0]))
    changed = True
    while changed and found:
        changed = False
        edges = [0, *(edge for span in sorted(spans) for edge in span[:2]), len(text)]
        for begin, end in zip(edges[::2], edges[1::2], strict=True):
            for encoded, sha, column, escaping in found:
                if end - begin < len(encoded):
                    continue
                start = _free_position(text, encoded, begin, spans, anywhere=False, end=end)
                if start >= 0:
                    spans.append((start, start + len(encoded), sha, column, escaping))
                    changed = True
                    break
            if changed:
                break


def page_piece(page: Mapping[str, Any]) -> bytes | None:
    """A piece of the middle of the page's main literal, as `_free_position` looks for it: a
    quick test of which record's text can hold the page."""
    column = "raw_html" if isinstance(page.get("raw_html"), str) else "cleaned_html"
    peek = getattr(page, "literal_of", None)
    written = (peek(column) if peek else None) or long_literal(page.get(column))
    if written is None:
        return None
    middle = len(written) // 2
    return written[middle : middle + PIECE_BYTES]


def _free_position(
    text: bytes,
    encoded: bytes,
    cursor: int,
    spans: list[tuple[int, int, str, str, str]],
    anywhere: bool = True,
    end: int | None = None,
) -> int:
    """Where `encoded` stands in `text` clear of the spans already cut: after `cursor` first
    (pages come in the order the record holds them), else anywhere before it (unless not
    `anywhere`). A search for a page-long needle runs at ~0.6 GB/s here; for a piece of its
    middle, then a comparison in place, at ~6 (the middle: pages of one site share their head,
    and every near miss would be compared that far)."""
    middle = len(encoded) // 2
    piece = encoded[middle : middle + PIECE_BYTES]
    ranges = [(cursor, len(text) if end is None else end)]
    if cursor and anywhere:
        ranges.append((0, cursor + len(encoded) - 1))
    for begin, stop_at in ranges:
        found = text.find(piece, begin + middle, stop_at)
        while found >= 0:
            start = found - middle
            clear = not any(
                start < stop and first < start + len(encoded) for first, stop, *_ in spans
            )
            if clear and start + len(encoded) <= stop_at and text.startswith(encoded, start):
                return start
            found = text.find(piece, found + 1, stop_at)
    return -1


def restore_pages(
    text: bytes, pages: str | None, page_of: Mapping[str, Mapping[str, Any]]
) -> bytes:
    """The record's bytes as they stood: each cut literal of `pages` put back, its page looked
    up by html_sha in `page_of`."""
    if pages is None:
        return text
    parts, previous = [], 0
    for offset, sha, column, escaping in orjson.loads(pages):
        page = page_of.get(sha)
        if page is None or not isinstance(page.get(column), str):
            raise PagesMissing(f"the record's {column} {sha} is not in raw_pages")
        parts.append(text[previous:offset])
        parts.append(literal(page[column], escaping))
        previous = offset
    parts.append(text[previous:])
    return b"".join(parts)


class PageCursor:
    """Restores the records of a partition in order from its `raw_pages` rows, read in order
    alongside: a record's cuts name only pages that came out while it, or the task it is a row
    of, was being standardized, so they lie after those of the records before, but for the
    rows of one task, whose pages come in the order of its steps. The last `WINDOW_PAGES`
    pages read stay at hand for those."""

    def __init__(self, page_rows: Iterator[Mapping[str, Any]]) -> None:
        self.page_rows = page_rows
        self.window: dict[str, Mapping[str, Any]] = {}

    def restore(self, text: bytes, pages: str | None) -> bytes:
        if pages is None:
            return text
        needed = {cut[1] for cut in orjson.loads(pages)}
        while not needed.issubset(self.window):
            row = next(self.page_rows, None)
            if row is None:
                missing = sorted(needed.difference(self.window))
                raise PagesMissing(f"raw_pages ends before the record's pages {missing}")
            self.window[row["html_sha"]] = row
            if len(self.window) > WINDOW_PAGES:
                del self.window[next(iter(self.window))]
        return restore_pages(text, pages, self.window)
