"""The ingest benchmark's floor does the stage's writes and no others: on one landing file it
writes the text `raw_records` holds and the pages `raw_pages` holds, byte for byte."""

from __future__ import annotations

from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest
from benchmark_scripts import load_benchmark

from bigaction_assets.hashing import page_snapshot
from bigaction_assets.page_cuts import PageCursor, cut_pages

PAGE_COLUMNS = ["html_sha", "raw_html", "cleaned_html"]


def snapshot_sha(action: dict) -> str:
    return page_snapshot(action.get("raw_html"), action.get("cleaned_html"))["html_sha"]


def lake_rows(lake: Path, table: str, columns: list[str]) -> list[tuple]:
    [path] = lake.rglob(f"{table}/*.parquet")
    data = pq.read_table(path, columns=columns).to_pylist()
    return sorted(tuple(row[c] for c in columns) for row in data)


def test_the_floor_writes_the_stages_raw_text_and_pages(tmp_path) -> None:
    bench = load_benchmark("ingest")
    landing = tmp_path / "landing"
    source = landing / "mind2web" / "train_bench.json"
    source.parent.mkdir(parents=True)
    from mind2web_synth import write_tasks

    write_tasks(source, n_tasks=3, steps_per_task=3, html_kb=4, seed=7)

    stage = bench.child(landing, tmp_path / "data")
    floor = bench.floor_child(source, tmp_path / "floor")
    twice = bench.floor_child(source, tmp_path / "twice", pages_twice=True)

    lake = tmp_path / "data" / "lake"
    assert floor["records"] == stage["rows"]["raw_records"] == 3
    assert floor["pages"] == stage["rows"]["dom_snapshots"] > 0
    floor_texts = sorted(
        (text,) for text in pq.read_table(tmp_path / "floor" / "raw_records.parquet")["text"]
        .to_pylist()
    )  # fmt: skip
    assert floor_texts == lake_rows(lake, "raw_records", ["text"])  # the pages cut out alike
    floor_pages = sorted(
        tuple(row[c] for c in PAGE_COLUMNS)
        for row in pq.read_table(tmp_path / "floor" / "raw_pages.parquet").to_pylist()
    )
    assert floor_pages == lake_rows(lake, "raw_pages", PAGE_COLUMNS)
    assert floor_pages == lake_rows(lake, "dom_snapshots", PAGE_COLUMNS)
    whole = sorted(
        (text,) for text in pq.read_table(tmp_path / "twice" / "raw_records.parquet")["text"]
        .to_pylist()
    )  # fmt: skip
    assert twice["text_mb"] > 2 * floor["text_mb"] and len(whole) == len(floor_texts)
    assert whole == sorted((text.decode(),) for text in landed_records(source))


def landed_records(source: Path) -> list[bytes]:
    return [
        body
        for line in source.read_bytes().splitlines()
        if (body := line.rstrip(b",")) not in (b"[", b"]", b"")
    ]


def test_the_floor_holds_each_page_once_and_every_record_whole(tmp_path) -> None:
    """The floor keeps each page once and loses nothing: each record's text, with its pages put
    back from `raw_pages`, is the landing record byte for byte, and no page is in the record
    texts any more."""
    bench = load_benchmark("ingest")
    source = tmp_path / "train_bench.json"
    from mind2web_synth import write_tasks

    write_tasks(source, n_tasks=4, steps_per_task=3, html_kb=4, seed=11)

    floor = bench.floor_child(source, tmp_path / "once")

    pages = {
        row["html_sha"]: row
        for row in pq.read_table(tmp_path / "once" / "raw_pages.parquet").to_pylist()
    }
    assert floor["pages"] == len(pages) > 0
    texts = pq.read_table(tmp_path / "once" / "raw_records.parquet")["text"].to_pylist()
    assert floor["text_mb"] * 1e6 == pytest.approx(sum(len(t.encode()) for t in texts))
    literals = [orjson.dumps(page["raw_html"]).decode() for page in pages.values()]
    assert not any(literal in text for literal in literals for text in texts)
    cursor, seen, restored = PageCursor(iter(pages.values())), set(), []
    for record, text in zip(landed_records(source), texts, strict=True):
        new = [pages[sha] for a in orjson.loads(record)["actions"] if (sha := snapshot_sha(a))]
        mine = [page for page in new if page["html_sha"] not in seen]
        seen.update(page["html_sha"] for page in mine)
        cut, note = cut_pages(record, mine)
        assert cut.decode() == text
        restored.append(cursor.restore(cut, note))
    assert restored == landed_records(source)


def test_the_reader_alone_reads_every_record_of_the_file_whole(tmp_path) -> None:
    """The reader yardstick times the stage's own reader over the same records the orjson
    yardstick parses: as many, and every byte of their text."""
    bench = load_benchmark("ingest")
    source = tmp_path / "train_bench.json"
    from mind2web_synth import write_tasks

    write_tasks(source, n_tasks=5, steps_per_task=2, html_kb=4, seed=3)
    lines = [line.rstrip(b",\r\n") for line in source.read_bytes().splitlines()]
    records = [body for body in lines if body not in (b"[", b"]", b"")]

    alone = bench.reader_child(source)
    bare = bench.orjson_child(source)

    assert alone["records"] == bare["records"] == len(records) == 5
    assert alone["text_bytes"] == sum(len(body) for body in records)


def test_rounds_are_summed_up_by_their_medians_and_the_target_both_ways() -> None:
    bench = load_benchmark("ingest")
    rounds = [
        {"mb_per_cpu_s": 125.0, "orjson_mb_per_cpu_s": 500.0, "peak_rss_mb": 870.0},
        {"mb_per_cpu_s": 110.0, "orjson_mb_per_cpu_s": 500.0, "peak_rss_mb": 900.0},
        {"mb_per_cpu_s": 100.0, "orjson_mb_per_cpu_s": 600.0, "peak_rss_mb": 880.0},
    ]
    summary = bench.rounds_summary(rounds)
    assert "ingest median 110.0 MB/s per core (100.0-125.0)" in summary
    assert "orjson median 500.0 (500.0-600.0)" in summary
    assert "ratio median 0.22 (0.17-0.25)" in summary
    assert ">= 120 MB/s in 1 of 3" in summary
    # the target's ratio is 120 / 632 = 0.19: 0.25 and 0.22 meet it, 0.17 does not
    assert "ratio 0.19 (120 of 632) in 2 of 3" in summary
    assert "peak RSS at most 900 MB" in summary
