"""`make cluster` and `make cluster-down`: a local cluster that builds what `make demo` builds.

python -m bigaction_assets.cluster up        # start (what is not running), build, print
python -m bigaction_assets.cluster down      # stop every service; the data stays
python -m bigaction_assets.cluster compare <demo data dir> <cluster data dir>
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import orjson

from bigaction_assets.cluster import compare, control, objectstore, report
from bigaction_assets.cluster.layout import ClusterLayout, service_env


def up(args: argparse.Namespace) -> int:
    layout = ClusterLayout.from_env()
    started = time.monotonic()
    print(f"Starting the cluster in {layout.data_dir} (landing {layout.landing})", flush=True)
    state = control.up(layout)
    print(f"  services up in {time.monotonic() - started:.0f} s", flush=True)
    if args.no_build:
        print("\n".join(["Listening:", *control.listening(state)]))
        return 0
    # this process plans the runs and reads the results as the cluster's processes see them
    os.environ.update(service_env(layout, state))
    from bigaction_assets.cluster.build import build, graphql_submitter
    from bigaction_assets.demo import lake_of, summary

    outcome = build(
        layout.paths(),
        graphql_submitter(state),
        orjson.loads(args.config),
        args.force,
        args.explain,
    )
    paths = layout.paths()
    print(summary(paths, lake_of(paths)))  # the catalog's views read the lake where it is
    print("\n".join(report.store_lines(objectstore.outputs(layout.data_dir))))
    print("\n".join(["", "Listening:", *control.listening(state)]))
    print(f"Built in {time.monotonic() - started:.0f} s. Stop it all with `make cluster-down`.")
    failed = [key for key, ok in outcome.items() if not ok]
    if failed:
        print(f"\n{len(failed)} step(s) failed: {', '.join(failed)} — see the UI, Runs.")
        return 1
    return 0


def down(_args: argparse.Namespace) -> int:
    layout = ClusterLayout.from_env()
    control.down(layout)
    print(f"Stopped the cluster in {layout.data_dir} (its data stays)")
    return 0


def compare_dirs(args: argparse.Namespace) -> int:
    try:  # a cluster folder with an s3 lake: its outputs are read back from its store
        expected, actual = (objectstore.outputs(Path(a)) for a in (args.expected, args.actual))
    except objectstore.StoreError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"Comparing {expected.where()} (expected) with {actual.where()}", flush=True)
    differences = compare.differences(expected, actual)
    for line in differences:
        print(line)
    print("identical" if not differences else f"{len(differences)} difference(s)")
    return 1 if differences else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", help="start the services, then build the demo graph")
    start.add_argument("--no-build", action="store_true", help="only start the services")
    start.add_argument("--force", action="store_true", help="build everything again")
    start.add_argument("--explain", action="store_true", help="say why each output is built")
    start.add_argument("--config", default="{}", help="run config by asset, as for the demo")
    start.set_defaults(run=up)
    commands.add_parser("down", help="stop every service").set_defaults(run=down)
    check = commands.add_parser("compare", help="compare two data folders' outputs")
    check.add_argument("expected")
    check.add_argument("actual")
    check.set_defaults(run=compare_dirs)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
