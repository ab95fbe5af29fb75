"""The SFT benchmark's reference runs: ADP's converter is run as ADP runs it, and each of our
runs is compared with the converter's run of its own round."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark

# A stand-in for ADP's agents/openhands/std_to_sft.py with its command line: it records what it
# was given and converts each trajectory, except those marked to fail (ADP prints null).
CONVERTER = """
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--is_web", required=True)
parser.add_argument("--api_env")
args = parser.parse_args()
with open(os.environ["SEEN"], "w") as seen:
    json.dump({"dataset": os.environ["MY_DATASET"], "is_web": args.is_web,
               "api_env": args.api_env, "cwd": os.getcwd()}, seen)
for line in sys.stdin:
    trajectory = json.loads(line)
    converted = None if trajectory.get("fail") else {"id": trajectory["id"], "conversations": []}
    print(json.dumps(converted))
"""


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "adp"
    package = root / "agents" / "openhands"
    package.mkdir(parents=True)
    for folder in (root / "agents", package):
        (folder / "__init__.py").write_text("")
    (package / "std_to_sft.py").write_text(CONVERTER)
    monkeypatch.setenv("SEEN", str(tmp_path / "seen.json"))
    return root


def landing(path: Path, ids: list[str], failing: frozenset[str] = frozenset()) -> Path:
    lines = [f'{{"id": "{i}", "fail": {"true" if i in failing else "false"}}}\n' for i in ids]
    path.write_text("".join(lines))
    return path


def test_the_converter_runs_with_the_flags_adp_gives_the_dataset(checkout, tmp_path) -> None:
    adp = load_benchmark("adp_converter")
    run = adp.run_converter(
        checkout,
        Path(sys.executable),
        "swe-smith",
        landing(tmp_path / "in.jsonl", ["a", "b", "c"]),
        tmp_path / "out.jsonl",
    )
    assert (run.trajectories, run.converted) == (3, 3)
    assert run.cpu > 0 and run.seconds > 0
    seen = (tmp_path / "seen.json").read_text()
    assert '"dataset": "swe-smith"' in seen and '"is_web": "no"' in seen
    assert '"api_env": "execute_bash"' in seen and str(checkout) in seen


def test_a_dataset_without_known_flags_is_refused(checkout, tmp_path) -> None:
    with pytest.raises(ValueError, match="no ADP converter flags"):
        load_benchmark("adp_converter").run_converter(
            checkout, Path(sys.executable), "weblinx", tmp_path / "in", tmp_path / "out"
        )


def test_a_run_that_fails_to_convert_some_trajectories_is_not_a_yardstick(
    checkout, tmp_path
) -> None:
    runs = load_benchmark("adp_converter").ReferenceRuns(
        checkout, Path(sys.executable), "synatra", tmp_path
    )
    file = landing(tmp_path / "in.jsonl", ["a", "b", "c"], failing=frozenset({"b"}))
    with pytest.raises(RuntimeError, match="ADP converted 2 of 3"):
        runs.run(file)


def test_each_of_our_runs_is_divided_by_its_own_rounds_converter_rate(
    checkout, tmp_path, capsys
) -> None:
    adp = load_benchmark("adp_converter")
    runs = adp.ReferenceRuns(checkout, Path(sys.executable), "synatra", tmp_path)
    runs.runs = [adp.ConverterRun(10.0, 10.0, 1000, 1000), adp.ConverterRun(20.0, 20.0, 1000, 1000)]
    ours = [  # round 1: 1 worker, 2 workers; round 2 the same, on a machine twice as slow
        {"workers": 1, "cpu": 4.0, "seconds": 4.0},
        {"workers": 2, "cpu": 5.0, "seconds": 2.5},
        {"workers": 1, "cpu": 8.0, "seconds": 8.0},
        {"workers": 2, "cpu": 10.0, "seconds": 5.0},
    ]
    runs.print_side_by_side(1000, ours)
    printed = capsys.readouterr().out
    # per core for one worker (100 -> 250/s: 2.5x), on the wall clock for two (4x), each round
    assert "1 worker(s): x ADP 2.50, 2.50, median 2.50" in printed
    assert "2 worker(s): x ADP 4.00, 4.00, median 4.00" in printed


def test_like_for_like_readings_leave_out_both_start_ups_or_count_both(
    checkout, tmp_path, capsys
) -> None:
    adp = load_benchmark("adp_converter")
    runs = adp.ReferenceRuns(checkout, Path(sys.executable), "synatra", tmp_path)
    runs.empty = adp.ConverterRun(5.0, 5.0, 0, 0)  # the converter's start-up: 5 CPU s
    runs.runs = [adp.ConverterRun(10.0, 10.0, 1000, 1000)]  # 100/s whole, 200/s without it
    ours = [
        {"workers": 1, "cpu": 4.0, "seconds": 4.0, "process_cpu": 8.0, "process_seconds": 8.0},
        {"workers": 2, "cpu": 5.0, "seconds": 2.5, "process_cpu": 9.0, "process_seconds": 5.0},
    ]
    runs.print_side_by_side(1000, ours)
    printed = capsys.readouterr().out
    assert "1 worker(s): x ADP 2.50, median 2.50" in printed  # 250/s against 100/s
    assert "1 worker(s): x ADP steady 1.25, median 1.25" in printed  # 250 against 200
    assert "1 worker(s): x ADP whole 1.25, median 1.25" in printed  # 125 against 100
    assert "2 worker(s): x ADP steady 2.00, median 2.00" in printed  # 400 against 200
    assert "2 worker(s): x ADP whole 2.00, median 2.00" in printed  # 200 on the wall clock
