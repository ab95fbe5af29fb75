"""Annotation app benchmark: sustained label submissions per second with 20 concurrent clients
on loopback, and the latency of each submission (p50, p95, p99).

    .venv/bin/python benchmarks/annotate.py [--clients 20] [--labels 100]

The app runs as its own process (`python -m bigaction_assets.annotate`, port 0, production
settings: argon2id defaults, WAL with synchronous=FULL), so the clients do not share its
interpreter. Each client signs in through the HTML form (not timed), then repeats: ask for the
next item (`POST /api/next`), submit a label (`POST /api/items/<n>/label`), over one kept-alive
connection. A label counts once the app answered 200, i.e. once it is committed to disk. The
server's CPU time is read from /proc, so the per-core figure does not depend on the load.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from annotate_server import Client, web_item  # the tests' cookie-keeping HTTP client
from uvicorn_process import start_server

from bigaction_assets.annotate.accounts import Accounts
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.security import Passwords
from bigaction_assets.annotate.store import AnnotationStore

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out" / "annotate"
PASSWORD = "benchmark password 0123"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def prepare(store: Path, clients: int, labels: int) -> None:
    if store.parent.exists():
        shutil.rmtree(store.parent)
    accounts = Accounts(Database(store), Passwords())
    for n in range(clients):
        accounts.add_user(f"annotator{n:02d}", PASSWORD)
    items = clients * labels // 3 + clients  # 3 annotators per item, with room to spare
    AnnotationStore(Database(store)).load_items(
        web_item(n, f"bench/ep{n // 10}") for n in range(items)
    )


def start_app(store: Path) -> tuple[subprocess.Popen, tuple[str, int]]:
    env = {**os.environ, "BIGACTION_ANNOTATE_SECRET": "benchmark-secret-0123456789abcdef0123"}
    return start_server(["bigaction_assets.annotate", "--port", "0", "--store", str(store)], env)


def run(address: tuple[str, int], clients: int, labels: int, pid: int) -> dict[str, float]:
    signed_in: list[Client] = []
    for n in range(clients):
        client = Client(address)
        assert client.login(f"annotator{n:02d}", PASSWORD) == 303
        signed_in.append(client)
    start = threading.Barrier(clients + 1)

    def annotate(client: Client) -> list[float]:
        latencies = []
        start.wait()
        for _ in range(labels):
            item = client.next_item()
            began = time.perf_counter()
            status, answer = client.label(item["item_no"], {"verdict": "correct"})
            latencies.append(time.perf_counter() - began)
            assert status == 200, answer
        return latencies

    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(annotate, c) for c in signed_in]
        cpu_before = cpu_seconds(pid)
        start.wait()
        began = time.perf_counter()
        latencies = sorted(x for f in futures for x in f.result())
        wall = time.perf_counter() - began
        cpu = cpu_seconds(pid) - cpu_before
    quantiles = statistics.quantiles(latencies, n=100)
    return {"labels": len(latencies), "seconds": wall, "labels_per_s": len(latencies) / wall,
            "p50_ms": quantiles[49] * 1000, "p95_ms": quantiles[94] * 1000,
            "p99_ms": quantiles[98] * 1000, "server_cpu_s": cpu,
            "labels_per_cpu_s": len(latencies) / cpu}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--labels", type=int, default=100, help="labels per client")
    args = parser.parse_args()
    store = OUT / "store.sqlite3"
    prepare(store, args.clients, args.labels)
    process, address = start_app(store)
    try:
        result = run(address, args.clients, args.labels, process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
    stored = sum(1 for _ in AnnotationStore(Database(store)).export_labels())
    assert stored == result["labels"], f"{stored} labels stored, {result['labels']} acknowledged"
    load = os.getloadavg()
    print(f"clients={args.clients} labels/client={args.labels}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores\n")  # fmt: skip
    print(
        "| clients | labels | seconds | labels/s | p50 ms | p95 ms | p99 ms | server CPU s "
        "| labels per server CPU-second |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    r = result
    print(f"| {args.clients} | {r['labels']:,} | {r['seconds']:.1f} | {r['labels_per_s']:.0f} "
          f"| {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['p99_ms']:.1f} | {r['server_cpu_s']:.1f} "
          f"| {r['labels_per_cpu_s']:.0f} |")  # fmt: skip
    print(f"\nall {stored:,} acknowledged labels are in the store")
    print(orjson.dumps(result).decode())


if __name__ == "__main__":
    main()
