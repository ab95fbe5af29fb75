"""Thought generation throughput against a local OpenAI-compatible server with a fixed latency.

For each concurrency level a fresh child process builds a synthetic dataset partition (not
timed), generates every thought through the real stage code (`ask_for_thoughts`: prompts,
the openai client, retries, the SQLite cache, budget accounting), then runs again on the same
cache. It prints calls per second against the bound (concurrency / latency), the calls the
rerun repeated (target 0), CPU-seconds per call (and so the calls one core could carry) and
the child's peak resident memory. On a loaded machine a request takes longer than the server's
latency (waiting for a CPU); "of observed bound" divides by concurrency / the mean round trip
the client saw, which tells the stage's own gaps between calls from the machine's.

    .venv/bin/python benchmarks/thoughts.py                 # concurrency 8, 32, 64
    .venv/bin/python benchmarks/thoughts.py --levels 8 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

ACTIONS_PER_EPISODE = 8


def synthetic_trajectories(actions: int) -> list[dict]:
    """ADP trajectories of ACTIONS_PER_EPISODE clicks, each after a ~250-token page."""
    episodes = []
    for n in range((actions + ACTIONS_PER_EPISODE - 1) // ACTIONS_PER_EPISODE):
        task = f"Order {n} boxes of green tea and pay by card."
        content: list[dict] = [
            {"class_": "text_observation", "source": "user", "name": None, "content": task}
        ]
        for k in range(ACTIONS_PER_EPISODE):
            rows = "\n".join(
                f"\t[{k * 40 + r}] link 'Product {n}-{k}-{r}: tea, {r * 7 % 50} g, ${r % 9}.99'"
                for r in range(12)
            )
            content.append({
                "class_": "web_observation", "html": None, "url": f"https://shop.test/{n}/{k}",
                "axtree": f"RootWebArea 'Shop, page {k}'\n{rows}", "image_observation": None,
                "viewport_size": None,
            })  # fmt: skip
            content.append({"class_": "api_action", "function": "click",
                            "kwargs": {"bid": f'"{k * 40 + 3}"'}, "description": None})  # fmt: skip
        episodes.append({"id": str(n), "content": content, "details": {}})
    return episodes


def time_round_trips() -> list[float]:
    """Record how long each request takes as the client sees it (server latency plus any wait
    for a CPU on a loaded machine), to tell the stage's own gaps from the machine's."""
    from bigaction_assets.llm.client import ChatClient

    seconds: list[float] = []
    request = ChatClient._request

    async def timed(self, messages, temperature):
        start = time.perf_counter()
        try:
            return await request(self, messages, temperature)
        finally:
            seconds.append(time.perf_counter() - start)

    ChatClient._request = timed  # type: ignore[method-assign]
    return seconds


def resident_mb() -> float:
    """Resident memory now (Linux), before the stage runs: imports and the built lake."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds_of(pid: int) -> float:
    """CPU-seconds (user + system) process `pid` has used so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(base_url: str, concurrency: int, calls: int) -> dict:
    """Build the partition, generate, generate again; figures as a dict."""
    from conftest import run_ingest, write_standardized

    from bigaction_assets.llm.client import ClientSettings
    from bigaction_assets.llm.session import LLMConfig
    from bigaction_assets.sources import adapters
    from bigaction_assets.thoughts.context import ContextSettings
    from bigaction_assets.thoughts.generate import ask_for_thoughts
    from bigaction_assets.tokens import encoding

    work = Path(tempfile.mkdtemp(prefix="bench-thoughts-"))
    source = work / "landing" / "adp" / "bench.json"
    source.parent.mkdir(parents=True)
    source.write_text(json.dumps(synthetic_trajectories(calls)))
    key = "adp.bench"
    ingested = run_ingest(adapters()["adp"], key, [source], work / "landing")
    write_standardized(work / "lake", key, ingested.tables)
    config = LLMConfig(ClientSettings("bench-model", base_url), concurrency=concurrency)
    settings = ContextSettings()
    encoding()  # loading the tokenizer (0.2 s, once per process) is not the stage's rate
    round_trips = time_round_trips()
    baseline_mb = resident_mb()

    def timed(run_id: str) -> tuple[float, float, object]:
        wall, cpu = time.perf_counter(), time.process_time()
        run = ask_for_thoughts(work / "lake", key, config, work / "calls.sqlite", run_id, settings)
        return time.perf_counter() - wall, time.process_time() - cpu, run

    wall, cpu, first = timed("first")
    _, rerun_cpu, second = timed("rerun")
    shutil.rmtree(work)
    return {
        "concurrency": concurrency,
        "calls": first.stats.requests,
        "thoughts": first.stats.completed,
        "seconds": wall,
        "cpu_seconds": cpu,
        "rerun_calls": second.stats.requests,
        "rerun_hits": second.stats.cache_hits,
        "rerun_cpu_seconds": rerun_cpu,
        "mean_round_trip": sum(round_trips) / max(1, len(round_trips)),
        "baseline_rss_mb": baseline_mb,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--levels", type=int, nargs="+", default=[8, 32, 64])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=15, help="calls per level = rounds x level")
    parser.add_argument("--child", nargs=3, metavar=("URL", "CONCURRENCY", "CALLS"))
    args = parser.parse_args()
    if args.child:
        url, concurrency, calls = args.child
        print(json.dumps(child(url, int(concurrency), int(calls))))
        return
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "llm_server.py"), "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        base_url = server.stdout.readline().strip()
        print(f"server {base_url}, latency {args.latency * 1000:.0f} ms; load {os.getloadavg()}")
        print("| concurrency | calls | seconds | calls/s | bound | of bound | round trip ms "
              "| of observed bound | rerun calls | CPU ms / call | calls/s per core "
              "| server CPU ms / call | RSS before / peak MB |")  # fmt: skip
        print("| ---: " * 13 + "|")
        for level in args.levels:
            command = [sys.executable, __file__, "--child", base_url, str(level)]
            server_cpu = cpu_seconds_of(server.pid)
            out = subprocess.run(
                [*command, str(level * args.rounds)], capture_output=True, text=True, check=True
            ).stdout
            server_cpu = cpu_seconds_of(server.pid) - server_cpu
            r = json.loads(out.strip().splitlines()[-1])
            rate, bound = r["calls"] / r["seconds"], level / args.latency
            observed = level / r["mean_round_trip"]
            cpu_ms = 1000 * r["cpu_seconds"] / r["calls"]
            print(
                f"| {level} | {r['calls']} | {r['seconds']:.2f} | {rate:.1f} | {bound:.0f} "
                f"| {rate / bound:.0%} | {1000 * r['mean_round_trip']:.0f} "
                f"| {rate / observed:.0%} | {r['rerun_calls']} | {cpu_ms:.2f} "
                f"| {1000 / cpu_ms:.0f} | {1000 * server_cpu / r['calls']:.2f} "
                f"| {r['baseline_rss_mb']:.0f} / {r['peak_rss_mb']:.0f} |",
                flush=True,
            )
        print(f"load average after: {os.getloadavg()}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
