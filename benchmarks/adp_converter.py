"""ADP's own SFT converter, run as the reference tool beside `sft.py`, on the same landing file.

The converter is `agents/openhands/std_to_sft.py` of a checkout of neulab/agent-data-protocol,
which the user supplies (its code is not part of this project): it reads ADP standardized
trajectories as JSON lines on stdin and prints one OpenHands-style SFT line per trajectory.
It is timed as a whole process, as ADP runs it (`MY_DATASET=<dataset> python -m
agents.openhands.std_to_sft <flags> < std.jsonl > sft.jsonl`), and once more on an empty
input, so its fixed start-up cost (imports) can be told apart from its rate.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# Each dataset's flags, as ADP's agents/openhands/DATASETS.md gives them.
DATASET_FLAGS = {
    "synatra": ["--is_web", "yes", "--api_env", "browser"],
    "swe-smith": ["--is_web", "no", "--api_env", "execute_bash"],
}


@dataclass(frozen=True)
class ConverterRun:
    """One whole-process run of the converter."""

    seconds: float
    cpu: float
    """User + system CPU seconds of the converter's process."""
    trajectories: int
    """Input lines."""
    converted: int
    """Output lines that are a conversion (the converter prints `null` for a failure)."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_converter(
    checkout: Path, python: Path, dataset: str, landing_file: Path, output: Path
) -> ConverterRun:
    """The converter over `landing_file`, its lines written to `output` (then counted)."""
    if dataset not in DATASET_FLAGS:
        raise ValueError(f"no ADP converter flags known for {dataset!r}: {sorted(DATASET_FLAGS)}")
    env = {
        **os.environ,
        "MY_DATASET": dataset,
        # litellm, imported by the converter, would otherwise try to download its price list
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": str(checkout),
    }
    command = [str(python), "-m", "agents.openhands.std_to_sft", *DATASET_FLAGS[dataset]]
    started, cpu = time.perf_counter(), _children_cpu()
    with open(landing_file, "rb") as source, open(output, "wb") as sink:
        subprocess.run(
            command,
            stdin=source,
            stdout=sink,
            stderr=subprocess.DEVNULL,
            cwd=checkout,
            env=env,
            check=True,
        )
    seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
    trajectories = _count_lines(landing_file)
    converted = _count_lines(output, skip=b"null")
    return ConverterRun(seconds, cpu, trajectories, converted)


def _count_lines(path: Path, skip: bytes | None = None) -> int:
    count = 0
    with open(path, "rb") as handle:
        for line in handle:
            if line.strip() and line.strip() != skip:
                count += 1
    return count


class ReferenceRuns:
    """The converter's runs beside one input's runs of our stage, and the ratios they give."""

    def __init__(self, checkout: Path, python: Path | None, dataset: str | None, work: Path):
        if dataset is None:
            raise ValueError("ADP's converter takes one dataset at a time: give --dataset")
        self.checkout, self.dataset, self.work = checkout, dataset, work
        self.python = python or checkout / "venv" / "bin" / "python"
        self.runs: list[ConverterRun] = []
        self.empty: ConverterRun | None = None

    def start_up(self) -> None:
        """The converter over an empty input: its fixed cost, paid once per process."""
        empty = self.work / "adp" / "empty.jsonl"
        empty.parent.mkdir(parents=True, exist_ok=True)
        empty.write_bytes(b"")
        self.empty = run_converter(
            self.checkout, self.python, self.dataset, empty, self.work / "adp" / "empty.out"
        )

    def run(self, landing_file: Path) -> ConverterRun:
        output = self.work / "adp" / "sft_openhands.jsonl"
        done = run_converter(self.checkout, self.python, self.dataset, landing_file, output)
        output.unlink()  # gigabytes at these sizes (the system prompt is in every line)
        if done.converted != done.trajectories:
            raise RuntimeError(f"ADP converted {done.converted} of {done.trajectories}")
        self.runs.append(done)
        return done

    def print_side_by_side(self, episodes: int, ours: list[dict]) -> None:
        """Each of our runs against the converter's run of the same round (run just before
        it, so a drift of the machine's speed moves both): one worker per core (CPU), more
        workers on the wall clock, as the targets are put; then the median ratio of each.

        Three readings of every pair. `x ADP`: our step (`sft_examples` with its checks)
        against the converter's whole process, the issue's own comparison. Two like for like:
        `steady`, our step against the converter without its start-up (neither pays for
        importing itself); `whole`, our whole child process (Python, Dagster, the
        definitions, the step) against the converter's whole process, where a run carries
        `process_cpu` and `process_seconds`."""
        start_up = self.empty.cpu if self.empty else float("nan")
        print(
            f"ADP converter, {self.dataset} x{episodes}: start-up (empty input) "
            f"{start_up:.2f} CPU s"
        )
        print(
            "round | ADP CPU s | ADP trajectories/s per core | without start-up | workers "
            "| ours episodes/s | measured as | x ADP | steady | whole"
        )
        per_round = len(ours) // len(self.runs)
        readings: dict[str, dict[int, list[float]]] = {"x ADP": {}, "steady": {}, "whole": {}}
        for number, r in enumerate(ours):
            adp_run = self.runs[number // per_round]
            adp = adp_run.trajectories / adp_run.cpu
            steady = adp_run.trajectories / (adp_run.cpu - start_up)
            one = r["workers"] == 1
            rate = episodes / r["cpu"] if one else episodes / r["seconds"]
            whole_time = r.get("process_cpu" if one else "process_seconds")
            whole = episodes / whole_time / adp if whole_time else float("nan")
            for name, value in (("x ADP", rate / adp), ("steady", rate / steady), ("whole", whole)):
                readings[name].setdefault(r["workers"], []).append(value)
            print(
                f"{number // per_round + 1} | {adp_run.cpu:.2f} | {adp:.0f} | {steady:.0f} | "
                f"{r['workers']} | {rate:.0f} | {'per core (stage CPU)' if one else 'wall'} | "
                f"{rate / adp:.2f} | {rate / steady:.2f} | {whole:.2f}"
            )
        for name, ratios in readings.items():
            for workers, values in sorted(ratios.items()):
                values.sort()
                label = "x ADP" if name == "x ADP" else f"x ADP {name}"
                print(
                    f"{workers} worker(s): {label} {', '.join(f'{v:.2f}' for v in values)}, "
                    f"median {values[len(values) // 2]:.2f}"
                )
