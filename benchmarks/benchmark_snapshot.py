"""Benchmark-snapshot benchmark: the web benchmark's steps built from Mind2Web-shaped datasets
of growing size, against the bare HTML parser on the same pages, in the same run.

    .venv/bin/python benchmarks/benchmark_snapshot.py                 # 500 MB and 2 GB
    .venv/bin/python benchmarks/benchmark_snapshot.py --sizes-mb 50   # a quick look

For each size it takes ingest.py's generated landing file (written once under benchmarks/out/,
git-ignored), ingests it in a child process (`ingest.py --child`: raw records and the
standardized tables), then, each in a fresh child:

- the stage: `benchmark_snapshot` for that partition through `dg.materialize`, the asset code
  `make demo` runs (pages read back from `dom_snapshots`, candidates from `web_candidates`,
  each step's page cleaned and pruned to its choices, two prompts, a validated zstd write);
- the yardstick: every step's raw page read from the same `dom_snapshots` file and parsed with
  the parser the stage uses (selectolax's Lexbor), nothing else.

It prints CPU seconds (user + system, `time.process_time`: one process, so per core), wall
seconds and peak resident memory of each child, and the stage's CPU over the parser's.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

KEY = "mind2web.train_bench"


def stage_child(data: Path) -> dict:
    """Materialize benchmark_snapshot for the ingested partition."""
    import dagster as dg

    from bigaction_assets.defs.benchmark.assets import benchmark_snapshot
    from bigaction_assets.defs.partitions import benchmark_datasets
    from bigaction_assets.defs.resources import LakeResource

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(benchmark_datasets.name, [KEY])
    lake = LakeResource(landing_dir=str(data / "landing"), data_dir=str(data))
    started, cpu_started = time.perf_counter(), time.process_time()
    result = dg.materialize(
        [benchmark_snapshot],
        partition_key=KEY,
        instance=instance,
        resources={"lake": lake},
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    metadata = result.asset_materializations_for_node("benchmark_snapshot")[0].metadata
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "steps": metadata["dagster/row_count"].value,
        "valid_steps": metadata["valid_steps"].value,
    }


def parser_child(data: Path) -> dict:
    """Parse every step's raw page with Lexbor: the bare work under the stage."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    from selectolax.lexbor import LexborHTMLParser

    standardized = data / "lake" / "standardized"
    started, cpu_started = time.perf_counter(), time.process_time()
    events = pq.read_table(standardized / "events" / f"{KEY}.parquet", columns=["html_sha"])
    steps = pc.value_counts(pc.drop_null(events["html_sha"]))
    shown = {row["values"]: row["counts"] for row in steps.to_pylist()}
    pages = pq.ParquetFile(standardized / "dom_snapshots" / f"{KEY}.parquet")
    parsed = 0
    for group in range(pages.num_row_groups):
        table = pages.read_row_group(group, columns=["html_sha", "raw_html"])
        shas, htmls = table["html_sha"].to_pylist(), table["raw_html"].to_pylist()
        for sha, html in zip(shas, htmls, strict=True):
            for _ in range(shown.get(sha, 0)):  # a page shown by several steps, parsed each time
                parsed += LexborHTMLParser(html).root is not None
    return {
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu_started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pages_parsed": parsed,
    }


def in_child(script: Path, *args: str) -> dict:
    """Run `script` with `args` in a fresh process and return the JSON it prints last."""
    completed = subprocess.run(
        [sys.executable, str(script), *args], check=True, capture_output=True, text=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def run(size_mb: int, out: Path, html_kb: int) -> dict:
    from ingest import landing_file

    landing, source = landing_file(out, size_mb, html_kb)
    data = out / f"{size_mb}mb" / "snapshot-data"
    subprocess.run(["rm", "-rf", str(data)], check=True)
    in_child(HERE / "ingest.py", "--child", str(landing), str(data))
    stage = in_child(Path(__file__), "--stage-child", str(data))
    bare = in_child(Path(__file__), "--parser-child", str(data))
    subprocess.run(["rm", "-rf", str(data)], check=True)
    return {
        "input_mb": source.stat().st_size / 1e6,
        "stage": stage,
        "parser": bare,
        "ratio": stage["cpu_seconds"] / bare["cpu_seconds"],
    }


def main() -> None:
    from ingest import HTML_KB

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--html-kb", type=int, default=HTML_KB)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--stage-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--parser-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage_child:
        print(json.dumps(stage_child(args.stage_child)))
        return
    if args.parser_child:
        print(json.dumps(parser_child(args.parser_child)))
        return
    print(
        f"{'input MB':>9} {'steps':>6} {'stage wall s':>12} {'stage CPU s':>11} "
        f"{'stage RSS MB':>12} {'parser CPU s':>12} {'stage / parser':>14} {'parser RSS MB':>13}"
    )
    for size in args.sizes_mb:
        r = run(size, args.out, args.html_kb)
        s, p = r["stage"], r["parser"]
        print(
            f"{r['input_mb']:>9.0f} {s['steps']:>6} {s['seconds']:>12.1f} "
            f"{s['cpu_seconds']:>11.1f} {s['peak_rss_mb']:>12.0f} {p['cpu_seconds']:>12.1f} "
            f"{r['ratio']:>14.2f} {p['peak_rss_mb']:>13.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
