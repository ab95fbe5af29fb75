"""Reading a Hub Parquet shard: memory and speed of the landing reader against pyarrow alone.

    .venv/bin/python benchmarks/hub_parquet.py                       # 200 rows of ~1 MB pages
    .venv/bin/python benchmarks/hub_parquet.py --rows 50 --page-kb 256   # a quick look

Writes the same the-wave-clean-shaped rows (query, url, an HTML page, the Selenium line, the
target's outer HTML, a 100 KB image) into two shards under benchmarks/out/hub/ (git-ignored),
once: `hub-default`, with pyarrow's defaults as the Hub's uploads use them (one row group; a data
page takes up to 1,024 values before its size is looked at, so a column of MB-sized pages is one
page), and `small-pages`, the same rows with a page cut after each value. Each shard is read in
fresh child processes: by `iter_parquet_records` (JSON records, images hashed: what `raw_records`
reads), and by pyarrow alone, a row group at a time into Python (`read_row_group(i).to_pylist()`).
It prints CPU seconds, MB of file per CPU second (one process: per core), and the peak resident
memory the read added to the process (peak RSS minus RSS after the imports).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "hub"
WORDS = [f"w{n:x}" for n in range(4096)]


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize() / 2**20


def reset_peak() -> None:
    """Start the peak RSS (VmHWM) over from now: imports must not count as the read's."""
    Path("/proc/self/clear_refs").write_text("5")


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def page(rng: random.Random, kb: int) -> str:
    """A page of tags and words: compresses like HTML does, unlike random bytes."""
    parts, size = ["<html><body>"], 0
    while size < kb * 1024:
        text = " ".join(rng.choices(WORDS, k=12))
        link = f'<a href="/p/{rng.randrange(10**6)}">{text}</a>'
        part = f'<div class="c{rng.randrange(64)}">{link}</div>'
        parts.append(part)
        size += len(part)
    return "".join(parts) + "</body></html>"


def shards(rows: int, page_kb: int) -> dict[str, Path]:
    names = {"hub-default": {}, "small-pages": {"write_batch_size": 1, "data_page_size": 1 << 20}}
    paths = {name: OUT / f"{name}-{rows}x{page_kb}kb.parquet" for name in names}
    if all(path.exists() for path in paths.values()):
        return paths
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "query": [f"Find item {n}" for n in range(rows)],
            "url": [f"https://shop.example/{n}" for n in range(rows)],
            "html": [page(rng, page_kb) for _ in range(rows)],
            "selenium_ground_truth": ['driver.find_element(By.ID, "q").click()'] * rows,
            "ground_truth_outer_html": ['<a href="/p/1">x</a>'] * rows,
            "ground_truth_highlighted_screenshot": pa.array(
                [{"bytes": rng.randbytes(100_000), "path": f"{n}.png"} for n in range(rows)],
                type=image,
            ),
        }
    )
    for name, options in names.items():
        pq.write_table(table, paths[name], **options)
    return paths


def child(path: Path, how: str) -> dict:
    from bigaction_assets.sources.parquet_rows import iter_parquet_records

    before = rss_mb()
    reset_peak()
    cpu, wall, rows = time.process_time(), time.perf_counter(), 0
    if how == "reader":
        for record in iter_parquet_records(path, lambda value: None):
            assert record.error is None, record.error_detail
            rows += 1
    else:
        parquet = pq.ParquetFile(path)
        for index in range(parquet.num_row_groups):
            rows += len(parquet.read_row_group(index).to_pylist())
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    return {"rows": rows, "cpu": cpu, "wall": wall, "added_mb": peak_mb() - before}


def run_child(path: Path, how: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), how],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--page-kb", type=int, default=1024)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.child[0]), args.child[1])))
        return
    print(f"load average {Path('/proc/loadavg').read_text().split()[0]}")
    print("| shard | pages of html | file MB | read by | rows | CPU s | MB/s per core | "
          "added RSS MB |")  # fmt: skip
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for name, path in shards(args.rows, args.page_kb).items():
        pages = "1 per row group" if name == "hub-default" else "1 per row"
        size = path.stat().st_size / 2**20
        for how in ("reader", "row groups"):
            result = run_child(path, how)
            print(f"| {name} | {pages} | {size:.0f} | {how} | {result['rows']} | "
                  f"{result['cpu']:.2f} | {size / result['cpu']:.0f} | "
                  f"{result['added_mb']:.0f} |")  # fmt: skip


if __name__ == "__main__":
    main()
