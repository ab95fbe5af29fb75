"""Pages cut out of raw records and put back: every record's bytes come back as they stood."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from bigaction_assets.hashing import page_snapshot
from bigaction_assets.page_cuts import (
    MIN_CUT_BYTES,
    PageCursor,
    PagesMissing,
    cut_pages,
    literal,
    restore_pages,
)

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
PAGE = (
    "<html><body>"
    + "<div class='row'>caf\u00e9 \u00b7 \u00a9 \"quoted\" \\ </div>\n" * 60
    + "</body></html>"
)


def snapshots_of(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The dom_snapshots rows a Mind2Web task's actions give, first seen first."""
    rows: dict[str, dict[str, Any]] = {}
    for action in task.get("actions", [task]):
        row = page_snapshot(action.get("raw_html"), action.get("cleaned_html"))
        if row is not None:
            rows.setdefault(row["html_sha"], row)
    return list(rows.values())


def by_sha(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["html_sha"]: row for row in rows}


def real_records() -> list[tuple[str, bytes]]:
    """Every Mind2Web record bundled with the project, and the real samples beside it."""
    records = [
        (f"train_demo[{n}]", orjson.dumps(task))
        for n, task in enumerate(
            orjson.loads((REPO / "landing/mind2web/train_demo.json").read_bytes())
        )
    ]
    step = SHARED / "mind2web" / "seeact_step.jsonl"
    if step.exists():
        lines = [line for line in step.read_bytes().splitlines() if line.strip()]
        records += [(f"seeact_step[{n}]", line) for n, line in enumerate(lines)]
    return records


@pytest.mark.parametrize("name,text", real_records(), ids=[n for n, _ in real_records()])
@pytest.mark.parametrize("ascii_escapes", [False, True], ids=["utf8", "ascii"])
def test_a_real_record_comes_back_byte_for_byte(name, text, ascii_escapes):
    if ascii_escapes:  # as Python's json writes it by default: `\u00e9` for é
        text = json.dumps(orjson.loads(text)).encode()
    pages = snapshots_of(orjson.loads(text))
    cut, note = cut_pages(text, pages)
    assert note is not None and len(cut) < len(text)
    cuts = orjson.loads(note)
    for page in pages:  # every long page came out, wherever the record held it
        for column in ("raw_html", "cleaned_html"):
            if len(page[column] or "") > MIN_CUT_BYTES:
                escaping = "ascii" if ascii_escapes and not page[column].isascii() else "utf8"
                assert literal(page[column], escaping) not in cut
    written = Counter(literal(by_sha(pages)[sha][column], esc) for _, sha, column, esc in cuts)
    for page_literal, times in written.items():  # one cut for each time the record held it
        assert text.count(page_literal) == times
    assert restore_pages(cut, note, by_sha(pages)) == text


def test_pages_come_out_in_either_escaping_and_go_back_in_it():
    record = {"id": "t", "actions": [{"raw_html": PAGE, "cleaned_html": PAGE[:1500] + "x"}]}
    text = b'{"a": ' + json.dumps(record).encode() + b', "b": ' + orjson.dumps(record) + b"}"
    pages = snapshots_of(record)
    cut, note = cut_pages(text, pages)
    assert {tuple(c[2:]) for c in orjson.loads(note)} == {
        ("raw_html", "utf8"),
        ("cleaned_html", "utf8"),
    }  # each page once: the first literal an encoder writes as the record holds it
    assert restore_pages(cut, note, by_sha(pages)) == text
    ascii_only = json.dumps(record).encode()
    cut, note = cut_pages(ascii_only, pages)
    assert {c[3] for c in orjson.loads(note)} == {"ascii"}
    assert restore_pages(cut, note, by_sha(pages)) == ascii_only


def test_a_page_written_some_other_way_stays_in_the_text():
    record = {"actions": [{"raw_html": PAGE.replace("</", "<\\/")}]}
    pages = snapshots_of(record)
    text = orjson.dumps(record).replace(b"/", b"\\/")  # as PHP writes `/`
    assert cut_pages(text, pages) == (text, None)
    assert restore_pages(text, None, {}) == text


def test_short_pages_and_unencodable_ones_stay():
    short = {"actions": [{"raw_html": "<p>hi</p>"}]}
    text = orjson.dumps(short)
    assert cut_pages(text, snapshots_of(short)) == (text, None)
    lone = {"html_sha": "0" * 64, "raw_html": "\ud800" + "x" * 2000, "cleaned_html": None}
    text = json.dumps({"p": lone["raw_html"]}).encode()
    assert cut_pages(text, [lone]) == (text, None)


def test_a_page_the_record_holds_again_is_cut_each_time():
    """A step that leaves the page as it was (typing into a box) shows it again."""
    other = PAGE.replace("row", "col")
    record = {"actions": [{"raw_html": PAGE}, {"raw_html": other}, {"raw_html": PAGE}]}
    text = orjson.dumps(record)
    pages = snapshots_of(record)
    assert len(pages) == 2
    cut, note = cut_pages(text, pages)
    assert [c[1] for c in orjson.loads(note)] == [
        pages[0]["html_sha"],
        pages[1]["html_sha"],
        pages[0]["html_sha"],
    ]
    assert cut == b'{"actions":[{"raw_html":},{"raw_html":},{"raw_html":}]}'
    assert restore_pages(cut, note, by_sha(pages)) == text


def test_a_missing_page_is_named():
    record = {"actions": [{"raw_html": PAGE}]}
    text = orjson.dumps(record)
    pages = snapshots_of(record)
    cut, note = cut_pages(text, pages)
    with pytest.raises(PagesMissing, match=pages[0]["html_sha"]):
        restore_pages(cut, note, {})


def test_the_cursor_reads_pages_alongside_the_records():
    """Records in order, each with the pages that came out of it, some of them not cut (held
    another way): the cursor skips those and restores each record from its own."""
    records, page_rows = [], []
    for n in range(4):
        page = PAGE + f"<!-- {n} -->"
        record = {"n": n, "actions": [{"raw_html": page}]}
        text = orjson.dumps(record)
        if n == 2:  # its page is in raw_pages but the record holds it some other way
            text = text.replace(b"/", b"\\/")
        rows = snapshots_of(record)
        page_rows += rows
        records.append((text, *cut_pages(text, rows)))
    cursor = PageCursor(iter(page_rows))
    assert [cursor.restore(cut, note) for _, cut, note in records] == [t for t, _, _ in records]
    with pytest.raises(PagesMissing, match="raw_pages ends before"):
        PageCursor(iter(page_rows[:1])).restore(records[1][1], records[1][2])
