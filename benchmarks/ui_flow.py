"""UI flow benchmark: under `make ui`, how long from a file dropped into landing to SFT files.

    .venv/bin/python benchmarks/ui_flow.py                 # a two-record dataset, 3 times
    .venv/bin/python benchmarks/ui_flow.py --large-mb 100  # and a ~100 MB one, both executors

Each measurement starts `python -m bigaction_assets.ui` (what `make ui` runs: `dagster dev`,
its daemon and code server) on a fresh temporary data folder, landing folder and Dagster
home, waits until the landing sensor has ticked once (the UI is up), then drops a dataset into
landing and times, from the drop: the landing sensor's run being created, that run's start
and end, the SFT files holding the dataset, and every run the drop set off (the automation
sensor's: benchmark partition, SFT files and release folder, leaderboard) having finished,
with no new one for two automation ticks.

The small dataset is two records of the bundled synatra sample carrying a marker. With
`--large-mb`, an ADP file of about that size (the bundled nnetnav-wa records, repeated under
new ids: thousands of long web episodes, so `sft_examples` renders with a process per core; made
once under benchmarks/out/) is dropped into a fresh UI twice: with a process per step and in
one process (`BIGACTION_PROCESSES_FROM_MB` forces each), to show what the step processes buy a
large dataset.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg

from bigaction_assets.ui_process import (
    LANDING_SENSOR,
    drop_file,
    running_ui,
    runs_since,
    sensor_ticks,
    wait_for,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
QUIET_SECONDS = 12  # two automation ticks without a new run: the flow has ended


@contextmanager
def ui_session(extra_env: dict[str, str]) -> Iterator[tuple[dg.DagsterInstance, Path, Path]]:
    """A fresh `make ui` on temporary folders, up and ticking: (instance, landing, data)."""
    with tempfile.TemporaryDirectory(prefix="bigaction-ui-flow-") as tmp:
        root = Path(tmp)
        landing, data = root / "landing", root / "data"
        landing.mkdir()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("BIGACTION_LLM_", "BIGACTION_HUB_")) and k != "DAGSTER_HOME"
        }
        env |= {"BIGACTION_DATA_DIR": str(data), "BIGACTION_LANDING_DIR": str(landing)}
        try:
            with (
                running_ui(env | extra_env, root / "ui.log"),
                dg.DagsterInstance.from_config(str(data / "dagster")) as instance,
            ):
                wait_for(lambda: sensor_ticks(instance, LANDING_SENSOR), 180, "a first tick")
                yield instance, landing, data
        except Exception:
            print((root / "ui.log").read_text(errors="replace")[-5000:], file=sys.stderr)
            raise


def small_dataset(marker: str) -> bytes:
    """The first two records of the bundled synatra sample, their objectives marked."""
    records = json.loads((REPO / "landing" / "adp" / "synatra.json").read_bytes())[:2]
    for record in records:
        record["id"] = f"{marker}-{record['id']}"
        record["content"][0]["content"] += f" ({marker})"
    return json.dumps(records).encode()


def sft_holds(data: Path, marker: str) -> bool:
    return any(marker in p.read_text(encoding="utf-8") for p in (data / "sft").glob("*/*.jsonl"))


def settled(instance: dg.DagsterInstance, since: float) -> float | None:
    """When the last run the drop set off ended, once all ended and none came for a while."""
    records = runs_since(instance, since)
    if not records or any(r.dagster_run.status not in FINISHED for r in records):
        return None
    last = max(max(r.end_time or 0, r.create_timestamp.timestamp()) for r in records)
    return last if time.time() - last >= QUIET_SECONDS else None


def executor_of(run: dg.DagsterRun) -> str:
    execution = (run.run_config or {}).get("execution", {}).get("config", {})
    return next(iter(execution), "in_process (default)")


def report_runs(instance: dg.DagsterInstance, since: float) -> None:
    print("| run | partition | assets | executor | created s | started s | run s |")
    print("| --- | --- | --- | --- | ---: | ---: | ---: |")
    for record in runs_since(instance, since):
        run = record.dagster_run
        assets = sorted(k.to_user_string() for k in run.asset_selection or ())
        shown = run.job_name if run.job_name != "__ASSET_JOB" else ", ".join(assets)
        print(
            f"| {run.job_name} | {run.tags.get('dagster/partition', '-')} | {shown} "
            f"| {executor_of(run)} | {record.create_timestamp.timestamp() - since:.1f} "
            f"| {(record.start_time or since) - since:.1f} "
            f"| {(record.end_time or 0) - (record.start_time or 0):.1f} "
            f"({run.status.value.lower()}) |"
        )


def small_flow(timeout: float) -> tuple[float, float, float]:
    """One drop of the small dataset into a fresh UI: seconds from the drop to the dataset's
    run ending, to the SFT files holding it, and to the last run ending."""
    with ui_session({}) as (instance, landing, data):
        marker = f"flow-{uuid.uuid4().hex[:8]}"
        since = time.time()
        drop_file(landing, "adp/flow_small.json", small_dataset(marker))
        wait_for(lambda: sft_holds(data, marker), timeout, "the SFT files holding the dataset")
        to_sft = time.time() - since
        last = float(wait_for(lambda: settled(instance, since), timeout, "the flow to settle"))
        [built] = [
            r for r in runs_since(instance, since) if r.dagster_run.job_name == "build_dataset"
        ]
        print(f"\nsmall dataset (2 records): SFT files hold it after {to_sft:.1f} s")
        report_runs(instance, since)
        return (built.end_time or 0) - since, to_sft, last - since


def copy(record: dict, n: int) -> dict:
    """The record under another id, its texts marked with `n`: other content, so the SFT stage
    renders and keeps it rather than dropping it as a duplicate."""
    content = [
        {**item, "content": f"{item['content']} [{n}]"} if isinstance(item.get("content"), str)
        else item
        for item in record["content"]
    ]  # fmt: skip
    return {**record, "id": f"{record['id']}-{n}", "content": content}


def large_dataset(size_mb: int) -> Path:
    """The bundled nnetnav-wa records repeated, each copy distinct, to about `size_mb` MB, once."""
    path = HERE / "out" / "ui_flow" / f"nnetnav_distinct_{size_mb}mb.json"
    if not path.exists():
        records = json.loads((REPO / "landing" / "adp" / "nnetnav-wa.json").read_bytes())
        copies = max(1, round(size_mb * 1e6 / len(json.dumps(records))))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".tmp").write_text(
            json.dumps([copy(record, n) for n in range(copies) for record in records])
        )
        path.with_suffix(".tmp").rename(path)
    return path


def sft_metadata(instance: dg.DagsterInstance) -> str:
    event = instance.get_latest_materialization_event(dg.AssetKey("sft_examples"))
    if event is None or event.asset_materialization is None:
        return "not built"
    values = {k: getattr(v, "value", v) for k, v in event.asset_materialization.metadata.items()}
    return (
        f"{values['dagster/row_count']} examples, {values['duplicates_dropped']} duplicates "
        f"dropped, {values['workers']} rendering processes"
    )


def large_flow(size_mb: int, mode: str, timeout: float) -> None:
    """One drop of the large dataset into a fresh UI, its run forced into `mode`."""
    source = large_dataset(size_mb)
    threshold = {"in_process": "1000000", "multiprocess": "0"}[mode]
    with ui_session({"BIGACTION_PROCESSES_FROM_MB": threshold}) as (instance, landing, _):
        target = landing / "adp" / "flow_large.json"
        target.parent.mkdir(parents=True)
        staging = landing / f".{target.name}.incoming"
        os.link(source, staging)  # appears whole: a rename
        since = time.time()
        staging.rename(target)
        last = float(wait_for(lambda: settled(instance, since), timeout, "the large flow", 1.0))
        size = source.stat().st_size / 1e6
        print(f"\nlarge dataset ({size:.0f} MB), build_dataset {mode}: every run ended after "
              f"{last - since:.1f} s; sft_examples: {sft_metadata(instance)}")  # fmt: skip
        report_runs(instance, since)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="drops of the small dataset")
    parser.add_argument("--large-mb", type=int, default=0, help="also a dataset this big")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    rows = [small_flow(args.timeout) for _ in range(args.repeat)]
    print("\n| drop | dataset built s | SFT files hold it s | every run ended s |")
    print("| ---: | ---: | ---: | ---: |")
    for n, (built, sft, last) in enumerate(rows, 1):
        print(f"| {n} | {built:.1f} | {sft:.1f} | {last:.1f} |")
    if args.large_mb:
        for mode in ("multiprocess", "in_process"):
            large_flow(args.large_mb, mode, args.timeout)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
