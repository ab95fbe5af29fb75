"""`make collector`: serve the telemetry collector with uvicorn (the key from the environment,
or the public development key with `--dev`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

from bigaction_assets.collector.app import MAX_BODY_BYTES, CollectorSettings, create_app
from bigaction_assets.privacy.pseudonyms import KEY_ENV, MissingKey, Pseudonymizer
from bigaction_assets.settings import Paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The BigAction telemetry collector.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8700)
    parser.add_argument("--landing", type=Path, help="landing folder (default: the project's)")
    parser.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES)
    parser.add_argument(
        "--dev",
        action="store_true",
        help=f"without {KEY_ENV}, use the public development key (demo data only)",
    )
    args = parser.parse_args(argv)
    try:
        pseudonyms = Pseudonymizer.from_env(dev=args.dev)
    except MissingKey as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return 2
    if pseudonyms.dev:
        print("WARNING: development mode, the pseudonym key is public", file=sys.stderr)
    landing = (args.landing or Paths.from_env().landing).resolve()
    settings = CollectorSettings(landing, pseudonyms, max_body_bytes=args.max_body_bytes)
    print(f"landing batches in {landing / 'telemetry'}", file=sys.stderr)
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level="info")
    return 0


if __name__ == "__main__":
    sys.exit(main())
