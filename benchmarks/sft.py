"""SFT benchmark: standardized episodes to SFT examples, at a scale of the bundled samples.

    .venv/bin/python benchmarks/sft.py                     # 1,000 and 5,000 episodes
    .venv/bin/python benchmarks/sft.py --episodes 100000   # the issue's scale (slow, see README)
    .venv/bin/python benchmarks/sft.py --source mind2web --episodes 200   # web pages

`adp` (default): the landing file repeats the bundled ADP samples (all five datasets, 26
trajectories) under new ids. `mind2web`: Mind2Web-shaped tasks of 5 steps with ~400 KB raw
pages (the ingest benchmark's generator), shown to the model as cleaned HTML. One child process
ingests the file (raw and standardized, timed apart), then one per worker setting materializes
`sft_examples` alone; the peak RSS reported is that of the SFT step. A last child writes
`sft_files` from those examples, with its own CPU seconds, megabytes written and peak RSS.
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
sys.path.insert(0, str(HERE))
SAMPLES = HERE.parent / "landing" / "adp"
KEYS = {"adp": "adp.sft_bench", "mind2web": "mind2web.train_sft_bench"}


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


def write_web_landing(path: Path, episodes: int) -> int:
    """A Mind2Web task file of `episodes` tasks with 5 steps of ~400 KB pages each."""
    from mind2web_synth import write_tasks

    path.parent.mkdir(parents=True, exist_ok=True)
    write_tasks(path, episodes, steps_per_task=5, html_kb=400, seed=7)
    return path.stat().st_size


def sample_files(dataset: str | None) -> list[Path]:
    """The bundled ADP sample files: all of them, or the one named `dataset`."""
    files = sorted(SAMPLES.glob("*.json"))
    return [f for f in files if dataset is None or f.stem == dataset]


def write_landing(path: Path, episodes: int, dataset: str | None = None) -> int:
    """A JSONL file of `episodes` trajectories cycling through the bundled samples (of one
    dataset, or of all)."""
    samples = [t for f in sample_files(dataset) for t in json.loads(f.read_text())]
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


def tokenizer_bound() -> tuple[float, float]:
    """MB/s and M tokens/s per core of cl100k_base alone (tiktoken, best of five) on every text
    of the bundled ADP samples: a stage that counts exactly what it shows cannot read faster."""
    from bigaction_assets.tokens import encoding

    encode = encoding().encode_ordinary
    texts = [
        value
        for f in sorted(SAMPLES.glob("*.json"))
        for trajectory in json.loads(f.read_text())
        for event in trajectory["content"]
        for value in event.values()
        if isinstance(value, str)
    ]
    size = sum(len(text.encode()) for text in texts)
    best, tokens = float("inf"), 0
    for _ in range(5):
        started = time.process_time()
        tokens = sum(len(encode(text)) for text in texts)
        best = min(best, time.process_time() - started)
    return size / 1e6 / best, tokens / 1e6 / best


def cpu_seconds() -> float:
    """CPU time of this process and of the worker processes it has waited for."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def child(landing: Path, data: Path, stage: str, workers: int, key: str) -> dict:
    import dagster as dg

    from bigaction_assets.definitions import defs

    code_location = defs()
    everything = [*code_location.assets, *(code_location.asset_checks or [])]
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("datasets", [key])
    resources = {"lake": code_location.resources["lake"].__class__(
        landing_dir=str(landing), data_dir=str(data)
    )}  # fmt: skip
    quiet: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    if stage == "ingest":
        ingest = dg.AssetSelection.groups("raw", "standardized")
        started, cpu = time.perf_counter(), cpu_seconds()
        dg.materialize(everything, selection=ingest, partition_key=key, instance=instance,
                       resources=resources, run_config=quiet)  # fmt: skip
        return {"seconds": time.perf_counter() - started, "cpu": cpu_seconds() - cpu}
    if stage == "files":
        return files_child(everything, instance, resources, quiet, data)
    events = data / "lake" / "standardized" / "events" / f"{key}.parquet"
    config = {**quiet, "ops": {"sft_examples": {"config": {"workers": workers}}}}
    started, cpu = time.perf_counter(), cpu_seconds()
    result = dg.materialize(everything, selection=dg.AssetSelection.assets("sft_examples"),
                            partition_key=key, instance=instance, resources=resources,
                            run_config=config)  # fmt: skip
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
        "workers": metadata["workers"],
        # the largest single process: the writer, or one worker if a worker grew larger
        "peak_rss_mb": max(
            resource.getrusage(who).ru_maxrss / 1024
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        ),
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def files_child(everything: list, instance: Any, resources: dict, quiet: dict, data: Path) -> dict:
    """`sft_files` alone (unpartitioned: every dataset's examples to JSONL), in this process."""
    import dagster as dg

    before = peak_rss_mb()  # Dagster and the definitions, before the step reads anything
    started, cpu = time.perf_counter(), cpu_seconds()
    result = dg.materialize(everything, selection=dg.AssetSelection.assets("sft_files"),
                            instance=instance, resources=resources, run_config=quiet)  # fmt: skip
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    [event] = result.get_asset_materialization_events()
    written = sum(p.stat().st_size for p in (data / "sft").rglob("*") if p.is_file())
    return {
        "seconds": seconds,
        "cpu": cpu,
        "examples": event.materialization.metadata["dagster/row_count"].value,
        "written_mb": written / 1e6,
        "rss_before_mb": before,
        "peak_rss_mb": peak_rss_mb(),
    }


FILES_COLUMNS = ("sft_files: episodes", "examples", "wall s", "CPU s", "MB written",
                 "MB/s/core", "examples/s/core", "RSS before step MB", "peak RSS MB")  # fmt: skip
COLUMNS = ("episodes", "input MB", "examples", "workers", "wall s", "CPU s", "episodes/s/core",
           "examples/s/core", "MB/s/core", "Mtok/s/core", "episodes/s", "peak RSS MB",
           "ingest wall s", "ingest CPU s", "ingest episodes/s")  # fmt: skip


def _run(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--episodes", type=int, nargs="+", default=[1_000, 5_000])
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 0], help="SFT workers per run (0: auto)"
    )
    parser.add_argument("--source", choices=sorted(KEYS), default="adp")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "sft")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        landing, data, stage, workers, key = args.child
        print(json.dumps(child(Path(landing), Path(data), stage, int(workers), key)))
        return
    key = KEYS[args.source]
    adapter, dataset = key.split(".")
    mb_per_s, mtok_per_s = tokenizer_bound()
    print(f"cl100k_base alone on the bundled ADP texts: {mb_per_s:.1f} MB/s, "
          f"{mtok_per_s:.2f} Mtokens/s per core")  # fmt: skip
    print(" | ".join(COLUMNS))
    for episodes in args.episodes:
        work = args.out / f"{args.source}-{episodes}"
        landing = work / "landing"
        if args.source == "adp":
            size = write_landing(landing / adapter / f"{dataset}.jsonl", episodes)
        else:
            size = write_web_landing(landing / adapter / f"{dataset}.json", episodes)
        subprocess.run(["rm", "-rf", str(work / "data")], check=True)
        command = [sys.executable, __file__, "--child", str(landing), str(work / "data")]
        # ingest in its own process, so the peak RSS reported is the SFT step's alone
        ingest = _run([*command, "ingest", "1", key])
        for workers in args.workers:
            r = _run([*command, "sft", str(workers), key])
            cpu = r["cpu"]  # per core: CPU seconds of the process and its workers
            figures = (
                episodes, f"{size / 1e6:.1f}", r["examples"], r["workers"],
                f"{r['seconds']:.1f}", f"{cpu:.1f}", f"{episodes / cpu:.0f}",
                f"{r['examples'] / cpu:.0f}", f"{size / 1e6 / cpu:.2f}",
                f"{r['tokens'] / 1e6 / cpu:.2f}", f"{episodes / r['seconds']:.0f}",
                f"{r['peak_rss_mb']:.0f}", f"{ingest['seconds']:.1f}", f"{ingest['cpu']:.1f}",
                f"{episodes / ingest['cpu']:.0f}",
            )  # fmt: skip
            print(" | ".join(str(f) for f in figures), flush=True)
        # the files are the same bytes for any worker setting: written once, from the last
        f = _run([*command, "files", "0", key])
        figures = (
            episodes, f["examples"], f"{f['seconds']:.1f}", f"{f['cpu']:.1f}",
            f"{f['written_mb']:.0f}", f"{f['written_mb'] / f['cpu']:.1f}",
            f"{f['examples'] / f['cpu']:.0f}", f"{f['rss_before_mb']:.0f}",
            f"{f['peak_rss_mb']:.0f}",
        )  # fmt: skip
        print(" | ".join(FILES_COLUMNS))
        print(" | ".join(str(x) for x in figures), flush=True)


if __name__ == "__main__":
    main()
