"""Rerun benchmark: `make demo`'s module on a fresh data folder, then again with nothing changed.

    .venv/bin/python benchmarks/rerun.py              # first run, then 3 no-change reruns
    .venv/bin/python benchmarks/rerun.py --reruns 1

Each run is a whole process (`python -m bigaction_assets.demo`, as `make demo` starts it),
timed from outside with `time.perf_counter`, its CPU seconds from the children's rusage. After
each rerun every file under the data folder except Dagster's storage is compared with before it:
a file counts as rewritten when its mtime, inode or sha256 changed, or it appeared or went.
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument(
        "--also-land", type=Path, default=None,
        help="a landing folder (`<adapter>/<dataset>...`) copied in beside the bundled one, to "
        "rerun at a real size (e.g. benchmarks/out/cluster/landing, 1.1 GB of Mind2Web shards)",
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
        print(f"load average at start: {load:.2f}; {os.cpu_count()} cores")
        print("| run | wall s | CPU s | files rewritten | files |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for name, wall, cpu, rewritten, total in rows:
            counts = "- | -" if rewritten is None else f"{rewritten} | {total}"
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {counts} |")


if __name__ == "__main__":
    main()
