"""Ingest benchmark: Mind2Web-shaped raw files of growing size through the real raw and
standardized assets, against bare orjson parsing of the same files, in MB/s per core.

    .venv/bin/python benchmarks/ingest.py                 # 100 MB, 500 MB, 2 GB
    .venv/bin/python benchmarks/ingest.py --sizes-mb 50   # a quick look
    .venv/bin/python benchmarks/ingest.py --sizes-mb 2000 --floor --rounds 3  # medians

Each size runs the ingest and the yardstick (read the file, orjson-parse each record) in fresh
child processes, so each peak RSS is its own. Throughput is input MB per CPU second of the child
(user + system, `time.process_time`): one process, so per core, and far less noisy than wall
time on a shared machine. Generated inputs are kept under benchmarks/out/ (git-ignored) and
reused by later runs. With `--rounds`, the children run in turn that many times, and the
medians follow, with how many rounds met issue 13's target, both as it was set (120 MB/s per
core) and as its ratio to orjson in the same round (120 of 632: this machine's speed drifts
through a day, and a ratio measured side by side does not).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

STEPS_PER_TASK = 5
# Issue 13's target, 120 MB/s per core, was set where bare orjson read the same file at 632:
# as a ratio to the yardstick measured in the same run, which this machine's drift leaves alone.
TARGET_MB_PER_CPU_S = 120.0
TARGET_ORJSON_MB_PER_CPU_S = 632.0
TARGET_RATIO = TARGET_MB_PER_CPU_S / TARGET_ORJSON_MB_PER_CPU_S
HTML_KB = 400  # Mind2Web raw pages run from ~100 KB to several MB; this sits at the low middle


def generate(path: Path, size_mb: int, html_kb: int, seed: int) -> None:
    """Write a Mind2Web-shaped task file of about `size_mb` megabytes, once."""
    from mind2web_synth import write_tasks

    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    task_bytes = STEPS_PER_TASK * html_kb * 1024 * 1.3  # raw + cleaned + candidates
    n_tasks = max(1, round(size_mb * 1024 * 1024 / task_bytes))
    tmp = path.with_suffix(".tmp")
    write_tasks(tmp, n_tasks, STEPS_PER_TASK, html_kb, seed)
    tmp.rename(path)


def child(landing: Path, data: Path) -> dict:
    """Materialize raw_records and the standardized tables for the one landing dataset."""
    import dagster as dg

    from bigaction_assets.defs.raw.assets import raw_records
    from bigaction_assets.defs.resources import LakeResource
    from bigaction_assets.defs.standardized.assets import standardized_tables

    key = "mind2web.train_bench"
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("datasets", [key])
    resources = {"lake": LakeResource(landing_dir=str(landing), data_dir=str(data))}
    started, cpu_started = time.perf_counter(), time.process_time()
    result = dg.materialize(
        [raw_records, standardized_tables],
        partition_key=key,
        instance=instance,
        resources=resources,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}},
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    counts = {
        event.step_materialization_data.materialization.asset_key.to_user_string(): (
            event.step_materialization_data.materialization.metadata["dagster/row_count"].value
        )
        for event in result.get_asset_materialization_events()
    }
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mb": peak_kb / 1024, "rows": counts}


def orjson_child(source: Path) -> dict:
    """The yardstick: read the file and orjson-parse each record, nothing else.

    The generator writes one task per line inside the array's brackets, so a line (less its
    separator) is a record; reading it in 16 MB blocks keeps memory flat like the ingest does.
    """
    import orjson

    started, cpu_started = time.perf_counter(), time.process_time()
    records = 0
    with open(source, "rb", buffering=16 * 1024 * 1024) as handle:
        for line in handle:
            body = line.rstrip(b",\r\n")
            if body not in (b"[", b"]", b""):
                orjson.loads(body)
                records += 1
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": elapsed,
        "cpu_seconds": cpu,
        "peak_rss_mb": peak_kb / 1024,
        "records": records,
    }


def reader_child(source: Path) -> dict:
    """The stage's own reader alone (`iter_json_records`: records cut by orjson, each with its
    exact bytes, line and offset), nothing done with them: what reading costs beside orjson."""
    from bigaction_assets.sources.jsonstream import iter_json_records

    started, cpu_started = time.perf_counter(), time.process_time()
    records = text_bytes = 0
    for raw in iter_json_records(source):
        records += 1
        text_bytes += len(raw.data)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mb": peak_kb / 1024,
        "records": records, "text_bytes": text_bytes,
    }  # fmt: skip


def floor_child(source: Path, out: Path, pages_twice: bool = False) -> dict:
    """The bare work the stage's design asks for, and nothing else: hash the file (its content
    fingerprint), parse each record once, write each long page as the JSON string its record
    holds and hash each distinct one (its key in `dom_snapshots`), cut those strings out of the
    record's bytes, and write two zstd Parquet files without dictionaries, as the lake does:
    the records' cut text (`raw_records`) and the pages, once (`raw_pages`, which
    `dom_snapshots` takes as it is), in batches of ~64 MB of text. The pages are written, hashed
    and cut with the stage's own functions (`page_snapshot`, `cut_pages`). No events, no
    candidates, no contract checks, no Dagster.

    `pages_twice` is the floor of the design before (to 2026-12-02): the record's text kept
    whole, so every page is compressed twice, in the raw text and in `dom_snapshots`.
    """
    import hashlib
    from contextlib import nullcontext

    import orjson
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bigaction_assets.hashing import page_snapshot, pages_for_cutting
    from bigaction_assets.heap_reuse import freed_memory_kept
    from bigaction_assets.page_cuts import cut_pages

    out.mkdir(parents=True, exist_ok=True)
    text_schema = pa.schema([("text", pa.large_string())])
    page_schema = pa.schema(
        [("html_sha", pa.large_string()), ("raw_html", pa.large_string()),
         ("cleaned_html", pa.large_string())]
    )  # fmt: skip
    options = {"compression": "zstd", "use_dictionary": False}
    started, cpu_started = time.perf_counter(), time.process_time()
    fingerprint = hashlib.sha256()
    with open(source, "rb") as handle:
        while block := handle.read(1 << 20):
            fingerprint.update(block)
    texts: list[bytes] = []
    pages: list = []
    seen: set[str] = set()
    held = records = written = 0  # written: bytes of record text the file gets
    with (
        pq.ParquetWriter(out / "raw_records.parquet", text_schema, **options) as raw_writer,
        pq.ParquetWriter(out / "raw_pages.parquet", page_schema, **options) as page_writer,
        pages_for_cutting() if not pages_twice else nullcontext(),  # as the stage's pass
        freed_memory_kept(),  # as the stage's steps: the same work, done as well
    ):

        def flush() -> None:
            raw_writer.write_table(pa.table([pa.array(texts, pa.large_string())], text_schema))
            # each raw page as the UTF-8 its key was hashed from, as the stage hands it over
            raw = pa.array([page.utf8_of("raw_html") for page in pages], pa.large_binary())
            columns = [
                [page["html_sha"] for page in pages],
                raw.view(pa.large_string()),
                [page["cleaned_html"] for page in pages],
            ]
            page_writer.write_table(pa.table(columns, page_schema))
            texts.clear()
            pages.clear()

        with open(source, "rb", buffering=16 * 1024 * 1024) as lines:
            for line in lines:
                body = line.rstrip(b",\r\n")
                if body in (b"[", b"]", b""):
                    continue
                record = orjson.loads(body)
                records += 1
                mine = []
                for action in record["actions"]:
                    page = page_snapshot(action.get("raw_html"), action.get("cleaned_html"))
                    if page is not None and page["html_sha"] not in seen:
                        seen.add(page["html_sha"])
                        mine.append(page)
                pages += mine
                if not pages_twice:
                    body = cut_pages(body, mine)[0]
                texts.append(body)
                held += len(body) + sum(
                    len(page["raw_html"] or "") + len(page["cleaned_html"] or "") for page in mine
                )
                written += len(body)
                if held >= 64 << 20:
                    flush()
                    held = 0
        flush()
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mb": peak_kb / 1024,
        "records": records, "pages": len(seen), "fingerprint": fingerprint.hexdigest(),
        "text_mb": written / 1e6,
    }  # fmt: skip


def in_child(*args: str) -> dict:
    """Run this script with `args` in a fresh process and return the JSON it prints."""
    completed = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def landing_file(out: Path, size_mb: int, html_kb: int) -> tuple[Path, Path]:
    """(the landing folder, its Mind2Web-shaped file) of a size, generated on first use."""
    landing = out / f"{size_mb}mb" / "landing"
    source = landing / "mind2web" / "train_bench.json"
    generate(source, size_mb, html_kb, seed=size_mb)
    return landing, source


def run(
    size_mb: int, out: Path, html_kb: int, floor: bool, pages_twice: bool, reader: bool = False
) -> dict:
    work = out / f"{size_mb}mb"
    landing, source = landing_file(out, size_mb, html_kb)
    data = work / "data"
    subprocess.run(["rm", "-rf", str(data)], check=True)
    report = in_child("--child", str(landing), str(data))
    yardstick = in_child("--orjson-child", str(source))
    input_mb = source.stat().st_size / 1e6
    report.update(
        input_mb=input_mb,
        mb_per_cpu_s=input_mb / report["cpu_seconds"],
        orjson_mb_per_cpu_s=input_mb / yardstick["cpu_seconds"],
        orjson_peak_rss_mb=yardstick["peak_rss_mb"],
    )
    if reader:
        alone = in_child("--reader-child", str(source))
        report.update(
            reader_mb_per_cpu_s=input_mb / alone["cpu_seconds"],
            reader_peak_rss_mb=alone["peak_rss_mb"],
        )
    if floor:
        floor_out = work / "floor"
        subprocess.run(["rm", "-rf", str(floor_out)], check=True)
        bare = in_child("--floor-child", str(source), str(floor_out))
        subprocess.run(["rm", "-rf", str(floor_out)], check=True)
        report.update(
            floor_mb_per_cpu_s=input_mb / bare["cpu_seconds"],
            floor_pages=bare["pages"],
            floor_text_mb=bare["text_mb"],
        )
    if pages_twice:
        floor_out = work / "floor-pages-twice"
        subprocess.run(["rm", "-rf", str(floor_out)], check=True)
        twice = in_child("--floor-child", str(source), str(floor_out), "--pages-twice")
        subprocess.run(["rm", "-rf", str(floor_out)], check=True)
        report.update(twice_mb_per_cpu_s=input_mb / twice["cpu_seconds"])
    return report


def rounds_summary(reports: list[dict]) -> str:
    """The medians of rounds run in turn, and how many met issue 13's target as it was set
    (MB/s per core) and as a ratio to bare orjson in the same round."""
    speeds = [r["mb_per_cpu_s"] for r in reports]
    yardsticks = [r["orjson_mb_per_cpu_s"] for r in reports]
    ratios = [r["mb_per_cpu_s"] / r["orjson_mb_per_cpu_s"] for r in reports]
    met = sum(speed >= TARGET_MB_PER_CPU_S for speed in speeds)
    met_ratio = sum(ratio >= TARGET_RATIO for ratio in ratios)
    rss = max(r["peak_rss_mb"] for r in reports)
    return (
        f"{len(reports)} rounds: ingest median {statistics.median(speeds):.1f} MB/s per core"
        f" ({min(speeds):.1f}-{max(speeds):.1f}), orjson median"
        f" {statistics.median(yardsticks):.1f} ({min(yardsticks):.1f}-{max(yardsticks):.1f}),"
        f" ratio median {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f});"
        f" >= {TARGET_MB_PER_CPU_S:.0f} MB/s in {met} of {len(reports)}, >= the target's ratio"
        f" {TARGET_RATIO:.2f} ({TARGET_MB_PER_CPU_S:.0f} of {TARGET_ORJSON_MB_PER_CPU_S:.0f})"
        f" in {met_ratio} of {len(reports)}; peak RSS at most {rss:.0f} MB"
    )


def print_round(r: dict, args: argparse.Namespace) -> None:
    rows = ", ".join(f"{k}={v}" for k, v in sorted(r["rows"].items()))
    ratio = r["mb_per_cpu_s"] / r["orjson_mb_per_cpu_s"]
    print(
        f"{r['input_mb']:>9.0f} {r['seconds']:>7.1f} {r['cpu_seconds']:>6.1f}"
        f" {r['mb_per_cpu_s']:>17.1f} {r['orjson_mb_per_cpu_s']:>17.1f} {ratio:>6.2f}"
        f" {r['peak_rss_mb']:>12.0f} {r['orjson_peak_rss_mb']:>14.0f}  {rows}",
        flush=True,
    )
    if args.reader:
        print(
            f"{'':>9} reader alone: {r['reader_mb_per_cpu_s']:.1f} MB/s per core,"
            f" {r['reader_mb_per_cpu_s'] / r['orjson_mb_per_cpu_s']:.2f} of orjson,"
            f" {r['reader_peak_rss_mb']:.0f} MB peak RSS",
            flush=True,
        )
    if args.floor:
        floor_ratio = r["floor_mb_per_cpu_s"] / r["orjson_mb_per_cpu_s"]
        print(
            f"{'':>9} floor (bare work of the design): {r['floor_mb_per_cpu_s']:.1f} MB/s"
            f" per core, {floor_ratio:.2f} of orjson; the stage runs at"
            f" {r['mb_per_cpu_s'] / r['floor_mb_per_cpu_s']:.2f} of its floor"
            f" ({r['floor_pages']} pages; record text {r['floor_text_mb']:.0f} MB of"
            f" {r['input_mb']:.0f})",
            flush=True,
        )
    if args.floor_pages_twice:
        print(
            f"{'':>9} floor of the design before (every page in the raw text too):"
            f" {r['twice_mb_per_cpu_s']:.1f} MB/s per core,"
            f" {r['twice_mb_per_cpu_s'] / r['orjson_mb_per_cpu_s']:.2f} of orjson",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes-mb", type=int, nargs="+", default=[100, 500, 2000])
    parser.add_argument("--html-kb", type=int, default=HTML_KB)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument(
        "--child", nargs=2, type=Path, metavar=("LANDING", "DATA"), help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time the bare work of the design (floor_child) on the same file",
    )
    parser.add_argument(
        "--floor-pages-twice",
        action="store_true",
        help="also time the floor of the design before, whose raw text kept every page too",
    )
    parser.add_argument(
        "--reader",
        action="store_true",
        help="also time the stage's reader alone (iter_json_records) on the same file",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="runs of the stage and its yardsticks at each size, in turn, then their medians",
    )
    parser.add_argument("--orjson-child", type=Path, metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--reader-child", type=Path, metavar="FILE", help=argparse.SUPPRESS)
    parser.add_argument("--floor-child", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--pages-twice", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor_child:
        source, out = args.floor_child
        print(json.dumps(floor_child(source, out, pages_twice=args.pages_twice)))
        return
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    if args.orjson_child:
        print(json.dumps(orjson_child(args.orjson_child)))
        return
    if args.reader_child:
        print(json.dumps(reader_child(args.reader_child)))
        return
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'input MB':>9} {'wall s':>7} {'CPU s':>6} {'ingest MB/s/core':>17}"
        f" {'orjson MB/s/core':>17} {'ratio':>6} {'peak RSS MB':>12} {'orjson RSS MB':>14}  rows"
    )
    for size in args.sizes_mb:
        reports = []
        for _ in range(args.rounds):
            reports.append(
                run(size, args.out, args.html_kb, args.floor, args.floor_pages_twice, args.reader)
            )
            print_round(reports[-1], args)
        if args.rounds > 1:
            print(f"{'':>9} {rounds_summary(reports)}", flush=True)


if __name__ == "__main__":
    main()
