"""SFT benchmark: standardized episodes to SFT examples, at a scale of the bundled samples.

    .venv/bin/python benchmarks/sft.py                     # 1,000 and 5,000 episodes
    .venv/bin/python benchmarks/sft.py --episodes 100000   # the issue's scale (slow, see README)

The landing file repeats the bundled ADP samples (all five datasets, 26 trajectories) under new
ids. One child process ingests it (raw and standardized, not timed); a second one materializes
`sft_examples` alone, which is what is timed, and its peak RSS is the one reported.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "landing" / "adp"
KEY = "adp.sft_bench"


ELEMENT_ID = re.compile(r"\[(\d+)\]")


def renumbered(value: Any, offset: int) -> Any:
    """`value` with every `[<element id>]` of its texts moved by `offset`: each copy of a page
    has lines of its own, as distinct episodes do, so no count is reused across copies."""
    if isinstance(value, str):
        return ELEMENT_ID.sub(lambda m: f"[{int(m.group(1)) + offset}]", value)
    if isinstance(value, list):
        return [renumbered(item, offset) for item in value]
    if isinstance(value, dict):
        return {key: renumbered(item, offset) for key, item in value.items()}
    return value


def write_landing(path: Path, episodes: int) -> int:
    """A JSONL file of `episodes` trajectories cycling through the bundled samples."""
    samples = [t for f in sorted(SAMPLES.glob("*.json")) for t in json.loads(f.read_text())]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        for number in range(episodes):
            trajectory = renumbered(samples[number % len(samples)], 100_000 * number)
            trajectory["id"] = f"bench-{number}"
            # a distinct first message, so no copy is dropped as an exact duplicate
            first, *rest = trajectory["content"]
            text = f"{first.get('content') or ''} (variant {number})"
            trajectory["content"] = [{**first, "content": text}, *rest]
            handle.write(orjson.dumps(trajectory) + b"\n")
    return path.stat().st_size


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(landing: Path, data: Path, stage: str) -> dict:
    import dagster as dg

    from bigaction_assets.definitions import defs

    code_location = defs()
    everything = [*code_location.assets, *(code_location.asset_checks or [])]
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("datasets", [KEY])
    resources = {"lake": code_location.resources["lake"].__class__(
        landing_dir=str(landing), data_dir=str(data)
    )}  # fmt: skip
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    if stage == "ingest":
        ingest = dg.AssetSelection.groups("raw", "standardized")
        started, cpu = time.perf_counter(), cpu_seconds()
        dg.materialize(everything, selection=ingest, partition_key=KEY, instance=instance,
                       resources=resources, run_config=quiet)  # fmt: skip
        return {"seconds": time.perf_counter() - started, "cpu": cpu_seconds() - cpu}
    events = data / "lake" / "standardized" / "events" / f"{KEY}.parquet"
    started, cpu = time.perf_counter(), cpu_seconds()
    result = dg.materialize(everything, selection=dg.AssetSelection.assets("sft_examples"),
                            partition_key=KEY, instance=instance, resources=resources,
                            run_config=quiet)  # fmt: skip
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    [event] = result.get_asset_materialization_events()
    metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    return {
        "seconds": seconds,
        "cpu": cpu,
        "examples": metadata["dagster/row_count"],
        "tokens": metadata["tokens_total"],
        "skipped": sum(metadata["episodes_skipped_by_reason"].values()),
        "events_mb": events.stat().st_size / 1e6,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--episodes", type=int, nargs="+", default=[1_000, 5_000])
    parser.add_argument("--out", type=Path, default=HERE / "out" / "sft")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        landing, data, stage = args.child
        print(json.dumps(child(Path(landing), Path(data), stage)))
        return
    columns = ("episodes", "input MB", "examples", "wall s", "cpu s", "episodes/s", "examples/s",
               "MB/s", "Mtokens/s", "peak RSS MB", "ingest MB/s")  # fmt: skip
    print(" ".join(f"{c:>11}" for c in columns))
    for episodes in args.episodes:
        work = args.out / f"{episodes}"
        landing = work / "landing"
        size = write_landing(landing / "adp" / "sft_bench.jsonl", episodes)
        subprocess.run(["rm", "-rf", str(work / "data")], check=True)
        command = [sys.executable, __file__, "--child", str(landing), str(work / "data")]
        # ingest in its own process, so the peak RSS reported is the SFT step's alone
        ingested = subprocess.run([*command, "ingest"], check=True, capture_output=True, text=True)
        ingest_cpu = json.loads(ingested.stdout.strip().splitlines()[-1])["cpu"]
        done = subprocess.run([*command, "sft"], check=True, capture_output=True, text=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        s = r["cpu"]  # rates per core: CPU seconds of the one process doing the work
        figures = (episodes, f"{size / 1e6:.1f}", r["examples"], f"{r['seconds']:.1f}", f"{s:.1f}",
                   f"{episodes / s:.1f}", f"{r['examples'] / s:.1f}", f"{size / 1e6 / s:.2f}",
                   f"{r['tokens'] / 1e6 / s:.2f}", f"{r['peak_rss_mb']:.0f}",
                   f"{size / 1e6 / ingest_cpu:.2f}")  # fmt: skip
        print(" ".join(f"{f:>11}" for f in figures), flush=True)


if __name__ == "__main__":
    main()
