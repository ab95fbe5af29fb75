"""Command line: `python benchmarks/mind2web_synth --out OUT --tasks N --steps S --html-kb K`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if not __package__:
    # Run as `python benchmarks/mind2web_synth`: import the package from benchmarks/, not its files
    # as top-level modules from the package folder Python put first on the path.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import mind2web_synth
from mind2web_synth import write_tasks


def main(argv: list[str] | None = None) -> int:
    """Write a task file as the arguments say; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="mind2web_synth", description=mind2web_synth.__doc__.splitlines()[0]
    )
    parser.add_argument("--out", type=Path, required=True, help="the task file to write")
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--html-kb", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--negatives", type=int, default=50)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    size = write_tasks(args.out, args.tasks, args.steps, args.html_kb, args.seed, args.negatives)
    seconds = time.perf_counter() - started
    print(f"wrote {size} bytes to {args.out} in {seconds:.2f}s ({size / 1e6 / seconds:.1f} MB/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
