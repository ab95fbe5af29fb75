"""The benchmark-snapshot benchmark's yardstick parses the pages the stage shows, once per step
that shows one: on a small landing file, as many pages as the stage has steps."""

from __future__ import annotations

import pyarrow.parquet as pq
from benchmark_scripts import load_benchmark


def test_the_yardstick_parses_a_page_for_each_step_the_stage_builds(tmp_path) -> None:
    ingest, snapshot = load_benchmark("ingest"), load_benchmark("benchmark_snapshot")
    landing = tmp_path / "landing"
    source = landing / "mind2web" / "train_bench.json"
    source.parent.mkdir(parents=True)
    from mind2web_synth import write_tasks

    write_tasks(source, n_tasks=3, steps_per_task=4, html_kb=4, seed=11)
    data = tmp_path / "data"
    ingest.child(landing, data)

    stage = snapshot.stage_child(data)
    bare = snapshot.parser_child(data)

    assert stage["steps"] == 12
    assert bare["pages_parsed"] == stage["steps"]
    written = pq.read_table(
        data / "lake" / "benchmark" / "benchmark_snapshot" / f"{snapshot.KEY}.parquet",
        columns=["raw_html"],
    )
    assert written.num_rows == 12 and written["raw_html"].null_count == 0
