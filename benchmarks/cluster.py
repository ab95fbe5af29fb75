"""Cluster benchmark: a sharded dataset through the standardize and SFT stages, locally and on
the cluster profile with 1 and 2 Celery workers.

    .venv/bin/python benchmarks/cluster.py                       # 8 shards, 80 MB: a quick look
    .venv/bin/python benchmarks/cluster.py --shards 8 --mb 1100  # the 1 GB table of the README

The input is one Mind2Web dataset landed as a folder of `--shards` task files
(`landing/mind2web/train_bench/part-NNNNN.json`, ~400 KB pages, `mind2web_synth`), so each
file is a partition `mind2web.train_bench~part-NNNNN`. Each profile builds `raw_records`, the
standardized tables, `thoughts` (no model: nothing to ask) and `sft_examples` of every shard,
with `sft_examples` on one process per step so that workers, not the stage, set the parallelism:

- local: one child process running each shard's `build_dataset` in-process (the default
  executor, `make demo`'s way) on a lake on the local disk;
- cluster: `python -m bigaction_assets.cluster up --no-build` (PostgreSQL, Redis, Dagster
  webserver and daemon, Celery workers) with the lake on moto's S3 server, a run per shard
  submitted at once; with 2 workers, then again (the bucket emptied) with one worker stopped.

Then the overhead of the cluster over local for one small dataset (the bundled ADP synatra
file). Wall time is `time.perf_counter` around the whole build; object-store bytes are the
request bodies of uploads and the response bodies of GETs, counted in the S3 server itself.
Generated inputs are kept under benchmarks/out/cluster/ (git-ignored) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent
DATASET = "train_bench"
SMALL = "adp.synatra"
ASSETS = [
    "raw_records", "episodes", "events", "dom_snapshots", "web_candidates", "images", "rejects",
    "thoughts", "sft_examples",
]  # fmt: skip
CONFIG = {
    "loggers": {"console": {"config": {"log_level": "WARNING"}}},
    "ops": {"sft_examples": {"config": {"workers": 1}}},
}
TASK_MB = 5 * 400 * 1.3 / 1024  # 5 steps of 400 KB pages, with cleaned pages and candidates


def shard_keys(shards: int) -> list[str]:
    return [f"mind2web.{DATASET}~part-{number:05d}" for number in range(shards)]


def write_input(landing: Path, shards: int, total_mb: float) -> int:
    """`shards` task files of about `total_mb / shards` MB each (kept when already there), and
    the small dataset; returns the shards' bytes."""
    from mind2web_synth import write_tasks

    folder = landing / "mind2web" / DATASET
    folder.mkdir(parents=True, exist_ok=True)
    tasks = max(1, round(total_mb / shards / TASK_MB))
    wanted = {f"part-{number:05d}.json" for number in range(shards)}
    for stale in folder.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    marker = folder.parent / f".{DATASET}.tasks"
    if not marker.exists() or marker.read_text() != str(tasks):
        for path in folder.iterdir():
            path.unlink()
        marker.write_text(str(tasks))
    for name in sorted(wanted):
        path = folder / name
        if not path.exists():
            tmp = folder / f".{name}.tmp"  # hidden: not a shard while written
            write_tasks(tmp, tasks, steps_per_task=5, html_kb=400, seed=int(name[5:10]) + 1)
            tmp.rename(path)
    small = landing / "adp" / "synatra.json"
    small.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "landing" / "adp" / "synatra.json", small)
    return sum(path.stat().st_size for path in folder.iterdir())


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the factory's own settings, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIGACTION_", "AWS_"))}
    env.pop("DAGSTER_HOME", None)
    env.pop("OPENAI_API_KEY", None)  # no model: thoughts asks nothing in every profile
    return {**env, **extra}


def local_child(partitions: list[str]) -> dict[str, float]:
    """In this (child) process: each partition's build, in-process; wall seconds of each."""
    import dagster as dg

    from bigaction_assets.demo_runs import load_definitions

    job = load_definitions().resolve_job_def("build_dataset")
    instance = dg.DagsterInstance.get()
    instance.add_dynamic_partitions("datasets", sorted(set(partitions)))
    seconds = {}
    for key in partitions:
        started = time.perf_counter()
        result = job.execute_in_process(
            instance=instance,
            run_config=CONFIG,
            partition_key=key,
            asset_selection=[dg.AssetKey(asset) for asset in ASSETS],
            raise_on_error=True,
        )
        assert result.success
        seconds[key] = time.perf_counter() - started
    return seconds


def run_local(work: Path, landing: Path, partitions: list[str]) -> dict[str, float]:
    data = work / "local"
    shutil.rmtree(data, ignore_errors=True)
    (data / "dagster").mkdir(parents=True)
    env = clean_env(
        BIGACTION_DATA_DIR=str(data),
        BIGACTION_LANDING_DIR=str(landing),
        DAGSTER_HOME=str(data / "dagster"),
    )
    command = [sys.executable, __file__, "--local-child", *partitions]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"local build failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run_cluster(
    work: Path, landing: Path, shards: list[str], max_runs: int | None
) -> dict[str, Any]:
    from cluster_services import CountingS3Server, LocalCluster

    figures: dict[str, Any] = {}
    root = work / "cluster"
    shutil.rmtree(root, ignore_errors=True)
    with CountingS3Server() as s3:
        env = clean_env(**s3.env("lake"))
        with LocalCluster(root, landing, env, max_runs) as cluster:
            cluster.build([SMALL], ASSETS, CONFIG)  # a first run: the processes warm up
            for workers in (2, 1):
                s3.empty()
                s3.traffic.reset()
                if workers == 1:
                    cluster.stop_worker("worker2")
                load = load_average()
                seconds = cluster.build(shards, ASSETS, CONFIG)
                figures[f"cluster{workers}"] = {
                    "seconds": seconds,
                    "load": f"{load} -> {load_average()}",
                    **s3.traffic.snapshot(),
                    "stored": s3.stored_bytes(),
                    "cpu": cluster.last_cpu,
                }
            s3.empty()
            figures["small"] = cluster.build([SMALL], ASSETS, CONFIG)
    return figures


def report(input_bytes: int, shards: int, local: dict[str, Any], cluster: dict[str, Any]) -> None:
    mb = input_bytes / 1e6
    print(f"\ninput: {shards} shards, {mb:,.0f} MB; sft_examples on 1 process per step\n")
    print("| profile | wall s | MB/s | object store written MB | read MB | stored MB "
          "| PUT/POST | GET | HEAD | load average |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    seconds = sum(local["shards"].values())
    print(f"| local, in-process | {seconds:.1f} | {mb / seconds:.1f} | | | | | | "
          f"| {local['load']} |")  # fmt: skip
    for workers in (1, 2):
        row = cluster[f"cluster{workers}"]
        req = row["requests"]
        print(
            f"| cluster, {workers} worker{'s' if workers > 1 else ''} | {row['seconds']:.1f} "
            f"| {mb / row['seconds']:.1f} | {row['written'] / 1e6:,.0f} | {row['read'] / 1e6:,.0f} "
            f"| {row['stored'] / 1e6:,.0f} | {req.get('PUT', 0) + req.get('POST', 0)} "
            f"| {req.get('GET', 0)} | {req.get('HEAD', 0)} | {row['load']} |"
        )
    one, two = cluster["cluster1"]["seconds"], cluster["cluster2"]["seconds"]
    print(f"\n2-worker speedup over 1 worker: {one / two:.2f}x; 2 workers over local: "
          f"{seconds / two:.2f}x")  # fmt: skip
    print_cpu(cluster)
    small_local = local["small"]
    print(f"one small dataset ({SMALL}): local {small_local:.1f} s, cluster "
          f"{cluster['small']:.1f} s, overhead {cluster['small'] - small_local:.1f} s")  # fmt: skip


def print_cpu(cluster: dict[str, Any]) -> None:
    """CPU seconds by service for each worker count (cluster_cpu.py): what the workers had of
    the machine, and what else took it."""
    from cluster_cpu import MACHINE, SESSIONS

    cpu = {workers: dict(cluster[f"cluster{workers}"]["cpu"]) for workers in (1, 2)}
    sessions = {workers: cpu[workers].pop(SESSIONS, 0.0) for workers in (1, 2)}
    machine = {workers: cpu[workers].pop(MACHINE, 0.0) for workers in (1, 2)}
    names = sorted(set(cpu[1]) | set(cpu[2]), key=lambda name: -cpu[2].get(name, 0.0))
    print("\n| CPU s by service | 1 worker | 2 workers |\n| --- | ---: | ---: |")
    for name in names:
        print(f"| {name} | {cpu[1].get(name, 0.0):.1f} | {cpu[2].get(name, 0.0):.1f} |")
    ours = {workers: sum(cpu[workers].values()) for workers in (1, 2)}
    print(f"| the cluster and the benchmark | {ours[1]:.1f} | {ours[2]:.1f} |")
    print(f"| other processes on the machine | {machine[1] - ours[1]:.1f} "
          f"| {machine[2] - ours[2]:.1f} |")  # fmt: skip
    print(f"| ({SESSIONS} opened) | {sessions[1]:.0f} | {sessions[2]:.0f} |")


def profile_run_limit() -> int:
    """`max_concurrent_runs` of the cluster profile's instance settings."""
    import yaml

    from bigaction_assets.cluster.layout import INSTANCE_SETTINGS

    return yaml.safe_load(INSTANCE_SETTINGS.read_text())["concurrency"]["runs"][
        "max_concurrent_runs"
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=8, help="shard files (default 8)")
    parser.add_argument("--mb", type=float, default=80, help="total input MB (default 80)")
    parser.add_argument("--out", type=Path, default=HERE / "out" / "cluster")
    parser.add_argument("--input-only", action="store_true", help="write the input and stop")
    parser.add_argument(
        "--max-concurrent-runs",
        type=int,
        help="the cluster's run queue limit (default: the profile's, deploy/cluster/dagster.yaml)",
    )
    parser.add_argument("--local-child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.local_child:
        print(json.dumps(local_child(args.local_child)))
        return 0
    args.out = args.out.resolve()  # DAGSTER_HOME and the cluster's folders must be absolute
    landing = args.out / "landing"
    input_bytes = write_input(landing, args.shards, args.mb)
    print(f"input: {landing} ({input_bytes / 1e6:,.0f} MB)", flush=True)
    if args.input_only:
        return 0
    shards = shard_keys(args.shards)
    load = load_average()
    seconds = run_local(args.out, landing, [SMALL, *shards, SMALL])  # the 2nd: warm
    local = {"shards": {k: seconds[k] for k in shards}, "small": seconds[SMALL]}
    local["load"] = f"{load} -> {load_average()}"
    print(f"local: {sum(local['shards'].values()):.1f} s", flush=True)
    cluster = run_cluster(args.out, landing, shards, args.max_concurrent_runs)
    print(json.dumps({"local": local, "cluster": cluster}), flush=True)
    print(f"\nrun queue: {args.max_concurrent_runs or profile_run_limit()} runs at once")
    report(input_bytes, args.shards, local, cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())
