"""DOM cleaning benchmark: raw Mind2Web-shaped pages of 100 KB to 5 MB through `clean_page`
and `render`, reporting MB/s of raw HTML on one core and the memory one page takes.

    .venv/bin/python benchmarks/dom.py                       # 100 KB, 500 KB, 1 MB, 2 MB, 5 MB
    .venv/bin/python benchmarks/dom.py --sizes-kb 100 5000   # a quick look
    .venv/bin/python benchmarks/dom.py --parsers             # lexbor vs lxml, parse + walk

Pages come from the `mind2web_synth` scale generator (themed pages with scripts, styles, hidden
parts and ~200 bytes of attributes per tag, like Mind2Web's raw dumps), generated once into
benchmarks/out/dom/ (git-ignored). Each size runs in a fresh child process, so its peak RSS is
its own: the table shows that peak above the process's RSS before the page was read. MB/s per
core divides by the process's CPU time (the machine is shared; wall-clock MB/s is shown too).
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
TARGET_MB_S = 25.0


def page_file(out: Path, kb: int) -> Path:
    """A task file whose first raw page is about `kb` kilobytes, made once."""
    from mind2web_synth import write_tasks

    path = out / f"page_{kb}kb.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_tasks(path, 1, 1, float(kb), seed=kb)
    return path


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize() / 2**20


def child(path: Path, seconds: float) -> dict:
    import orjson

    from bigaction_assets.dom import clean_page, render

    clean_page("<html><body>warm up</body></html>")
    before = rss_mb()
    html = orjson.loads(path.read_bytes())[0]["actions"][0]["raw_html"]
    size = len(html.encode())
    runs, started, cpu = 0, time.perf_counter(), time.process_time()
    while runs < 3 or time.perf_counter() - started < seconds:
        cleaned = render(clean_page(html))
        runs += 1
    elapsed = (time.perf_counter() - started) / runs
    cpu_seconds = (time.process_time() - cpu) / runs
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "page_mb": size / 1e6, "ms": elapsed * 1000, "cpu_ms": cpu_seconds * 1000,
        "mb_per_s": size / 1e6 / cpu_seconds, "wall_mb_per_s": size / 1e6 / elapsed,
        "cleaned_kb": len(cleaned.encode()) / 1e3, "runs": runs, "base_rss_mb": before,
        "peak_above_base_mb": peak - before,
    }  # fmt: skip


def parsers(path: Path) -> None:
    """Why lexbor: parse alone, and parse plus a walk over every node, against lxml."""
    import orjson
    from lxml import etree
    from selectolax.lexbor import LexborHTMLParser

    html = orjson.loads(path.read_bytes())[0]["actions"][0]["raw_html"]

    def lexbor_walk() -> int:
        return sum(1 for node in LexborHTMLParser(html).root.traverse(include_text=True))

    def lxml_walk() -> int:
        tree = etree.fromstring(html, etree.HTMLParser(remove_comments=True, huge_tree=True))
        return sum(1 for node in tree.iter() for _ in (node.attrib, node.text, node.tail))

    cases = {
        "lexbor parse": lambda: LexborHTMLParser(html),
        "lexbor parse+walk": lexbor_walk,
        "lxml parse": lambda: etree.fromstring(html, etree.HTMLParser(huge_tree=True)),
        "lxml parse+walk": lxml_walk,
    }
    for name, run in cases.items():
        started, runs = time.perf_counter(), 0
        while runs < 3 or time.perf_counter() - started < 2:
            run()
            runs += 1
        mb_s = len(html.encode()) / 1e6 / ((time.perf_counter() - started) / runs)
        print(f"{name:>18} {mb_s:8.1f} MB/s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--sizes-kb", type=int, nargs="+", default=[100, 500, 1000, 2000, 5000])
    parser.add_argument("--seconds", type=float, default=3.0, help="time spent per size")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "dom")
    parser.add_argument("--parsers", action="store_true", help="compare parsers (needs lxml)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.seconds)))
        return
    if args.parsers:
        parsers(page_file(args.out, 5000))
        return
    print(
        f"{'page MB':>8} {'CPU ms':>8} {'MB/s/core':>10} {'wall MB/s':>10} {'cleaned KB':>11} "
        f"{'peak-base MB':>13}"
    )
    for kb in args.sizes_kb:
        path = page_file(args.out, kb)
        command = [sys.executable, __file__, "--child", str(path), "--seconds", str(args.seconds)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        verdict = "ok" if r["mb_per_s"] >= TARGET_MB_S else f"below {TARGET_MB_S:.0f} MB/s"
        print(
            f"{r['page_mb']:>8.2f} {r['cpu_ms']:>8.1f} {r['mb_per_s']:>10.1f} "
            f"{r['wall_mb_per_s']:>10.1f} {r['cleaned_kb']:>11.0f} "
            f"{r['peak_above_base_mb']:>13.1f}  {verdict}",
            flush=True,
        )


if __name__ == "__main__":
    main()
