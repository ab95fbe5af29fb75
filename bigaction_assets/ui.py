"""`make ui`: the Dagster UI and daemon (sensors, schedules) on the same data `make demo` wrote."""

from __future__ import annotations

import argparse
import os
import sys

from bigaction_assets.dagster_home import prepare_dagster_home
from bigaction_assets.settings import PROJECT_ROOT, Paths

DEFAULT_PORT = 3000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the UI's port")
    args = parser.parse_args(argv)
    home = prepare_dagster_home(Paths.from_env())
    print(f"Dagster home {home}; open http://127.0.0.1:{args.port}", flush=True)
    dagster = os.path.join(os.path.dirname(sys.executable), "dagster")
    workspace = str(PROJECT_ROOT / "workspace.yaml")
    command = ["dev", "-w", workspace, "-h", "127.0.0.1", "-p", str(args.port)]
    os.execv(dagster, [dagster, *command])


if __name__ == "__main__":
    main()
