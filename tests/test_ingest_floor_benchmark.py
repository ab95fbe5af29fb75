"""The ingest benchmark's floor does the stage's writes and no others: on one landing file it
writes the text `raw_records` holds and the pages `dom_snapshots` holds, byte for byte."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pyarrow.parquet as pq

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PAGE_COLUMNS = ["html_sha", "raw_html", "cleaned_html"]


def ingest_benchmark() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("ingest_bench", BENCHMARKS / "ingest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lake_rows(lake: Path, table: str, columns: list[str]) -> list[tuple]:
    [path] = lake.rglob(f"{table}/*.parquet")
    data = pq.read_table(path, columns=columns).to_pylist()
    return sorted(tuple(row[c] for c in columns) for row in data)


def test_the_floor_writes_the_stages_raw_text_and_pages(tmp_path) -> None:
    bench = ingest_benchmark()
    landing = tmp_path / "landing"
    source = landing / "mind2web" / "train_bench.json"
    source.parent.mkdir(parents=True)
    from mind2web_synth import write_tasks

    write_tasks(source, n_tasks=3, steps_per_task=3, html_kb=4, seed=7)

    stage = bench.child(landing, tmp_path / "data")
    floor = bench.floor_child(source, tmp_path / "floor")

    lake = tmp_path / "data" / "lake"
    assert floor["records"] == stage["rows"]["raw_records"] == 3
    assert floor["pages"] == stage["rows"]["dom_snapshots"] > 0
    floor_texts = sorted(
        (text,) for text in pq.read_table(tmp_path / "floor" / "raw_records.parquet")["text"]
        .to_pylist()
    )  # fmt: skip
    assert floor_texts == lake_rows(lake, "raw_records", ["text"])
    floor_pages = sorted(
        tuple(row[c] for c in PAGE_COLUMNS)
        for row in pq.read_table(tmp_path / "floor" / "dom_snapshots.parquet").to_pylist()
    )
    assert floor_pages == lake_rows(lake, "dom_snapshots", PAGE_COLUMNS)
