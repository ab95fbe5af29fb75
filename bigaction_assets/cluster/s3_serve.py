"""`python -m bigaction_assets.cluster.s3_serve --port N`: moto's S3 server on 127.0.0.1.

moto's own `moto_server` logs a line per request (thousands in a demo build); this one logs
warnings only, so the cluster's `services/logs/s3.log` says when something went wrong. It serves
moto's S3 application alone: `moto_server` asks every request which AWS service it is for (a
scan of moto's package folders each time), a third of a small request's CPU here.
"""

from __future__ import annotations

import argparse
import logging
import sys

from moto.server import create_backend_app
from werkzeug.serving import make_server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # it sets INFO on itself otherwise
    server = make_server(
        "127.0.0.1",
        args.port,
        create_backend_app("s3"),
        threaded=True,  # the workers and the build read and write at once
    )
    print(f"S3 server (moto) listening on http://127.0.0.1:{args.port}", flush=True)
    server.serve_forever()  # until SIGTERM: `make cluster-down` saves the bucket first
    return 0


if __name__ == "__main__":
    sys.exit(main())
