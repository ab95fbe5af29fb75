"""The one-pass staging on an object-store lake: one Mind2Web dataset's raw and standardize steps
on moto's S3 server, staged (the raw step standardizes in its pass, the standardize step moves
the staged objects into place) against not staged (the standardize step reads the raw table
back from the store), with the bytes and requests the server saw in each step.

    .venv/bin/python benchmarks/store_staging.py            # ~100 MB of pages
    .venv/bin/python benchmarks/store_staging.py --mb 300

CPU s is this process's, the S3 server's threads included (the same server work either way
but for the bytes it serves). Both give the same objects (the script checks it). Not staged is
what an object-store lake did before staging worked there (and what a personal-data adapter
does anywhere).
Generated inputs are kept under benchmarks/out/store_staging/ (git-ignored) and reused.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
TASK_MB = 5 * 400 * 1.3 / 1024  # as in cluster.py: 5 steps of 400 KB pages
KEY = "mind2web.train_bench"


def write_input(landing: Path, total_mb: float) -> int:
    from mind2web_synth import write_tasks

    path = landing / "mind2web" / "train_bench.json"
    tasks = max(1, round(total_mb / TASK_MB))
    marker = landing / f".tasks-{tasks}"
    if not marker.exists() or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_tasks(path, tasks, steps_per_task=5, html_kb=400, seed=1)
        marker.write_text("")
    return path.stat().st_size


def build(landing: Path, uri: str, server: Any, staged: bool) -> list[dict[str, Any]]:
    """The raw step, then the standardize step: seconds and store traffic of each."""
    import dagster as dg

    from bigaction_assets import staging
    from bigaction_assets.definitions import defs
    from bigaction_assets.defs.resources import LakeResource

    if not staged:  # the raw step then stages nothing, as for a personal-data adapter
        staging.StagedTables = lambda *_, **__: None  # type: ignore[assignment,misc]
    code = defs()
    data = Path(tempfile.mkdtemp(prefix="store-staging-"))
    resource = LakeResource(landing_dir=str(landing), data_dir=str(data), lake_uri=uri)
    rows = []
    with dg.DagsterInstance.ephemeral() as instance:
        instance.add_dynamic_partitions("datasets", [KEY])
        for step, selection in (
            ("raw", dg.AssetSelection.assets("raw_records")),
            ("standardize", dg.AssetSelection.groups("standardized")),
        ):
            server.traffic.reset()
            started, cpu = time.perf_counter(), time.process_time()
            result = dg.materialize(
                list(code.assets),  # type: ignore[arg-type]
                partition_key=KEY,
                instance=instance,
                resources={"lake": resource},
                selection=selection,
            )
            assert result.success
            seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
            rows.append({"step": step, "seconds": seconds, "cpu": cpu, **server.traffic.snapshot()})
    return rows


def objects(server: Any, prefix: str) -> dict[str, str]:
    client = server.client()
    pages = client.get_paginator("list_objects_v2").paginate(Bucket="bench", Prefix=prefix)
    keys = [item["Key"] for page in pages for item in page.get("Contents", [])]
    return {
        key.removeprefix(prefix): hashlib.sha256(
            client.get_object(Bucket="bench", Key=key)["Body"].read()
        ).hexdigest()
        for key in keys
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="input size, MB of task JSON")
    args = parser.parse_args(argv)
    from cluster_services import CountingS3Server

    landing = HERE / "out" / "store_staging" / "landing"
    size = write_input(landing, args.mb)
    print(f"input: {size / 1e6:,.0f} MB ({KEY})")
    print("| mode | step | wall s | CPU s | store written MB | store read MB | PUT+POST | GET |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    with CountingS3Server() as server:
        for name, value in server.env("unused").items():
            if name != "BIGACTION_LAKE_URI":
                os.environ[name] = value
        for mode, staged in (("staged", True), ("not staged", False)):
            for row in build(landing, f"s3://bench/{mode.replace(' ', '-')}/lake", server, staged):
                requests = row["requests"]
                print(
                    f"| {mode} | {row['step']} | {row['seconds']:.1f} | {row['cpu']:.1f} | "
                    f"{row['written'] / 1e6:,.0f} | {row['read'] / 1e6:,.0f} | "
                    f"{requests.get('PUT', 0) + requests.get('POST', 0)} | "
                    f"{requests.get('GET', 0)} |"
                )
        same = objects(server, "not-staged/lake/") == objects(server, "staged/lake/")
    print(f"same objects either way: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
