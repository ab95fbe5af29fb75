"""SFT benchmark: standardized episodes to SFT examples and files, at scales of the samples.

    .venv/bin/python benchmarks/sft.py --dataset synatra --episodes 20000 --workers 1 2
    .venv/bin/python benchmarks/sft.py --dataset swe-smith --episodes 5000 --workers 1 2
    .venv/bin/python benchmarks/sft.py --episodes 100000 --workers 0   # every sample, files
    .venv/bin/python benchmarks/sft.py --source mind2web --episodes 200   # web pages

`adp` (default): the landing file repeats the bundled ADP samples (of one dataset with
`--dataset`, else all eight, 31 trajectories) under new ids. `mind2web`: Mind2Web-shaped tasks of
5 steps with ~400 KB raw pages (the ingest benchmark's generator), shown as cleaned HTML. One
child process ingests the file, then one per worker setting materializes `sft_examples` alone
(with its blocking checks), then one `sft_files`. The yardstick, in this process: cl100k_base
alone (tiktoken, and quicktok) over every text of the landing file.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
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


def distinct_texts(trajectory: dict[str, Any], number: int) -> dict[str, Any]:
    """The trajectory with every text it shows a model (observations, messages, code, thoughts,
    call arguments) ending in a mark of copy `number`: no text repeats across copies, as in a
    real dataset, so no count is found remembered from another copy."""
    mark = f" [copy {number}]"
    items = []
    for item in trajectory["content"]:
        item = dict(item)
        for field in ("content", "description"):
            if isinstance(item.get(field), str) and item[field]:
                item[field] += mark
        if isinstance(item.get("kwargs"), dict):
            item["kwargs"] = {
                key: value + mark if isinstance(value, str) and value else value
                for key, value in item["kwargs"].items()
            }
        items.append(item)
    return {**trajectory, "content": items}


def write_landing(
    path: Path, episodes: int, dataset: str | None = None, distinct: bool = False
) -> int:
    """A JSONL file of `episodes` trajectories cycling through the bundled samples (of one
    dataset, or of all); with `distinct`, no text repeats across copies (`distinct_texts`)."""
    samples = [t for f in sample_files(dataset) for t in json.loads(f.read_text())]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        for number in range(episodes):
            trajectory = renumbered(samples[number % len(samples)], 100_000 * number)
            if distinct:
                trajectory = distinct_texts(trajectory, number)
            trajectory["id"] = f"bench-{number}"
            # a distinct first message, so no copy is dropped as an exact duplicate
            first, *rest = trajectory["content"]
            text = f"{first.get('content') or ''} (variant {number})"
            trajectory["content"] = [{**first, "content": text}, *rest]
            handle.write(orjson.dumps(trajectory) + b"\n")
    return path.stat().st_size


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def tokenizer_yardstick(landing_file: Path) -> dict[str, float]:
    """CPU seconds of cl100k_base alone over every text of the landing file's trajectories
    (what the stage reads and shows, before any cut): tiktoken's `encode_ordinary`, the
    reference, and quicktok's `count`, the exact counter the stage uses."""
    from bigaction_assets.tokens import encoding, fast_encoding

    texts = []
    with open(landing_file, "rb") as handle:
        for line in handle:
            texts += [t for t in _strings(orjson.loads(line)["content"]) if t]
    encode, count = encoding().encode_ordinary, fast_encoding().count
    started = time.process_time()
    tokens = sum(len(encode(text)) for text in texts)
    tiktoken_cpu = time.process_time() - started
    started = time.process_time()
    counted = sum(count(text) for text in texts)
    quicktok_cpu = time.process_time() - started
    if counted != tokens:
        raise AssertionError(f"quicktok counted {counted} tokens, tiktoken {tokens}")
    return {"tiktoken_cpu": tiktoken_cpu, "quicktok_cpu": quicktok_cpu, "tokens": tokens,
            "mb": sum(len(text.encode()) for text in texts) / 1e6}  # fmt: skip


def cpu_seconds() -> float:
    """CPU time of this process and of the worker processes it has waited for."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


def child(
    landing: Path, data: Path, stage: str, workers: int, key: str, formats: str = "all"
) -> dict:
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
    settings: dict[str, Any] = {"workers": workers}
    if formats != "all":
        settings["formats"] = formats.split(",")
    config = {**quiet, "ops": {"sft_examples": {"config": settings}}}
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
        "process_cpu": cpu_seconds(),  # the whole child: Python, imports, Dagster, the stage
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
COLUMNS = ("dataset", "episodes", "input MB", "examples", "workers", "wall s", "CPU s",
           "episodes/s/core", "whole-process CPU s", "episodes/s/core whole process",
           "tiktoken alone CPU s", "stage / tiktoken", "quicktok alone CPU s", "episodes/s",
           "peak RSS MB", "ingest CPU s")  # fmt: skip


def _run(command: list[str]) -> dict[str, Any]:
    """The child's last line of JSON, with `process_seconds`: its whole process, wall clock."""
    started = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {**report, "process_seconds": time.perf_counter() - started}


def _firsts(items: list[int]) -> Iterator[tuple[bool, int]]:
    return ((number == 0, item) for number, item in enumerate(items))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--episodes", type=int, nargs="+", default=[1_000, 5_000])
    parser.add_argument(
        "--workers", type=int, nargs="+", default=[1, 0], help="SFT workers per run (0: auto)"
    )
    parser.add_argument("--source", choices=sorted(KEYS), default="adp")
    parser.add_argument(
        "--dataset", help="scale this bundled ADP sample alone (e.g. synatra, swe-smith)"
    )
    parser.add_argument(
        "--no-yardstick", action="store_true", help="skip timing the tokenizers alone"
    )
    parser.add_argument("--out", type=Path, default=HERE / "out" / "sft")
    parser.add_argument(
        "--formats", default="all", help="comma-separated SFT formats to render (default: all)"
    )
    parser.add_argument(
        "--adp-checkout",
        type=Path,
        help="a checkout of neulab/agent-data-protocol: time its SFT converter on the same file",
    )
    parser.add_argument(
        "--adp-python", type=Path, help="the Python that has the converter's dependencies"
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="runs of each setting (and of ADP's), in turn"
    )
    parser.add_argument(
        "--distinct-texts",
        action="store_true",
        help="no text repeats across copies (each ends in a mark of its copy), as in real data",
    )
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        landing, data, stage, workers, key, formats = args.child
        print(json.dumps(child(Path(landing), Path(data), stage, int(workers), key, formats)))
        return
    key = KEYS[args.source]
    adapter, dataset = key.split(".")
    print(" | ".join(COLUMNS))
    for episodes in args.episodes:
        name = (args.dataset or args.source) + ("-distinct" if args.distinct_texts else "")
        work = args.out / f"{name}-{episodes}"
        landing = work / "landing"
        if args.source == "adp":
            landing_file = landing / adapter / f"{dataset}.jsonl"
            size = write_landing(landing_file, episodes, args.dataset, args.distinct_texts)
            yardstick = None if args.no_yardstick else tokenizer_yardstick(landing_file)
        else:
            size = write_web_landing(landing / adapter / f"{dataset}.json", episodes)
            yardstick = None
        subprocess.run(["rm", "-rf", str(work / "data")], check=True)
        command = [sys.executable, __file__, "--child", str(landing), str(work / "data")]
        # ingest in its own process, so the peak RSS reported is the SFT step's alone
        ingest = _run([*command, "ingest", "1", key, "all"])
        reference = None
        if args.adp_checkout and args.source == "adp":
            from adp_converter import ReferenceRuns

            reference = ReferenceRuns(args.adp_checkout, args.adp_python, args.dataset, work)
            reference.start_up()
        ours: list[dict[str, Any]] = []
        # each round: the converter, then our stage at each worker setting, in turn
        settings = [(w, first) for _ in range(args.rounds) for first, w in _firsts(args.workers)]
        for workers, first_of_round in settings:
            if reference and first_of_round:
                reference.run(landing_file)
            r = _run([*command, "sft", str(workers), key, args.formats])
            ours.append(r)
            cpu = r["cpu"]  # per core: CPU seconds of the stage's process and its workers
            tiktoken = yardstick["tiktoken_cpu"] if yardstick else float("nan")
            quick = yardstick["quicktok_cpu"] if yardstick else float("nan")
            figures = (
                name, episodes, f"{size / 1e6:.1f}", r["examples"], r["workers"],
                f"{r['seconds']:.1f}", f"{cpu:.2f}", f"{episodes / cpu:.0f}",
                f"{r['process_cpu']:.2f}", f"{episodes / r['process_cpu']:.0f}",
                f"{tiktoken:.2f}", f"{cpu / tiktoken:.2f}", f"{quick:.2f}",
                f"{episodes / r['seconds']:.0f}", f"{r['peak_rss_mb']:.0f}",
                f"{ingest['cpu']:.1f}",
            )  # fmt: skip
            print(" | ".join(str(f) for f in figures), flush=True)
        if reference:
            reference.print_side_by_side(episodes, ours)
        # the files are the same bytes for any worker setting: written once, from the last
        f = _run([*command, "files", "0", key, "all"])
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
