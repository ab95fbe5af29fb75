"""Rerun benchmark: `make demo`'s module on a fresh data folder, then again with nothing changed.

    .venv/bin/python benchmarks/rerun.py              # first run, then 3 no-change reruns
    .venv/bin/python benchmarks/rerun.py --reruns 1
    .venv/bin/python benchmarks/rerun.py --reruns 1 --edit --also-land big/   # one task edited

With `--edit`, one more rerun follows the no-change ones, after one task of the bundled
`synatra` dataset (5 episodes) is edited: what a small change costs beside the rest of the
landing (with `--also-land`, a big dataset), and which of Dagster's steps took the time.

Each run is a whole process (`python -m bigaction_assets.demo`, as `make demo` starts it),
timed from outside with `time.perf_counter`, its CPU seconds from the children's rusage. After
each rerun every file under the data folder except Dagster's storage is compared with before it:
a file counts as rewritten when its mtime, inode or sha256 changed, or it appeared or went.
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

from bigaction_assets.rerun.fingerprint import file_states

REPO = Path(__file__).resolve().parents[1]


def run_demo(root: Path, env: dict[str, str]) -> tuple[float, float]:
    """One demo process: (wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bigaction_assets.demo"],
        cwd=root, env=env, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def edit_one_task(landing: Path) -> None:
    """Append to the task of the first trajectory of `adp/synatra.json`."""
    path = landing / "adp" / "synatra.json"
    trajectories = json.loads(path.read_text())
    first = trajectories[0]["content"][0]
    first["content"] = f"{first['content']} (edited)"
    path.write_text(json.dumps(trajectories))


def slowest_steps(dagster_home: Path, since: float, count: int = 4) -> str:
    """The longest Dagster steps that started after `since`, as `step (partition) seconds`."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        steps = [
            (stats.end_time - stats.start_time, stats.step_key, run.tags.get("dagster/partition"))
            for run in instance.get_runs(limit=200)
            for stats in instance.get_run_step_stats(run.run_id)
            if stats.start_time and stats.end_time and stats.start_time >= since
        ]
    return ", ".join(
        f"{step}{f' ({part})' if part else ''} {seconds:.1f}"
        for seconds, step, part in sorted(steps, reverse=True)[:count]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument(
        "--also-land", type=Path, default=None,
        help="a landing folder (`<adapter>/<dataset>...`) copied in beside the bundled one, to "
        "rerun at a real size (e.g. benchmarks/out/cluster/landing, 1.1 GB of Mind2Web shards)",
    )  # fmt: skip
    parser.add_argument(
        "--edit", action="store_true",
        help="then edit one task of synatra and rerun (a small change beside the rest)",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bigaction-rerun-") as tmp:
        root = Path(tmp)
        shutil.copytree(
            REPO / "landing", root / "landing", ignore=shutil.ignore_patterns("telemetry")
        )
        if args.also_land is not None:
            shutil.copytree(args.also_land, root / "landing", dirs_exist_ok=True)
        size = sum(p.stat().st_size for p in (root / "landing").rglob("*") if p.is_file())
        print(f"landing: {size / 1e6:,.0f} MB")
        env = {k: v for k, v in os.environ.items() if not k.startswith("BIGACTION_LLM_")}
        env.pop("DAGSTER_HOME", None)
        env |= {
            "BIGACTION_DATA_DIR": str(root / "data"),
            "BIGACTION_LANDING_DIR": str(root / "landing"),
        }
        load = os.getloadavg()[0]
        rows = [("first (empty data folder)", *run_demo(root, env), None, None)]
        for n in range(args.reruns):
            before = file_states(root / "data")
            wall, cpu = run_demo(root, env)
            after = file_states(root / "data")
            rewritten = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
            rows.append((f"no-change rerun {n + 1}", wall, cpu, len(rewritten), len(after)))
        steps = ""
        if args.edit:
            edit_one_task(root / "landing")
            before, started = file_states(root / "data"), time.time()
            wall, cpu = run_demo(root, env)
            after = file_states(root / "data")
            rewritten = {f for f in before.keys() | after.keys() if before.get(f) != after.get(f)}
            rows.append(("one synatra task edited", wall, cpu, len(rewritten), len(after)))
            steps = slowest_steps(root / "data" / "dagster", started)
        print(f"load average at start: {load:.2f}; {os.cpu_count()} cores")
        print("| run | wall s | CPU s | files rewritten | files |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, wall, cpu, rewritten, total in rows:
            counts = "- | -" if rewritten is None else f"{rewritten} | {total}"
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {counts} |")
        if steps:
            print(f"slowest steps of the edited rerun, s: {steps}")


if __name__ == "__main__":
    main()
