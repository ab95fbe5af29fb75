"""`make annotate`: serve the annotation app with uvicorn on 127.0.0.1.

The session key comes from `BIGACTION_ANNOTATE_SECRET` (32+ characters), else a random key for
this run. Cookies are `Secure`: browsers send them over https, and over plain http only to
loopback (127.0.0.1, localhost), which they count as secure. Anywhere else, put the app behind
TLS.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

from bigaction_assets.annotate import default_store_path
from bigaction_assets.annotate.app import AppSettings, create_app
from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.security import Passwords, Signer, WeakSecret
from bigaction_assets.annotate.store import AnnotationStore
from bigaction_assets.http_deadline import add_header_arguments, header_limits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The BigAction annotation app.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8800)
    parser.add_argument("--store", type=Path, help="the app's store (default: data/annotate/)")
    add_header_arguments(parser)
    args = parser.parse_args(argv)
    try:
        signer = Signer.from_env()
    except WeakSecret as exc:
        print(f"refusing to start: {exc}", file=sys.stderr)
        return 2
    store_path = args.store or default_store_path()
    store = AnnotationStore(Database(store_path))
    print(
        f"store {store_path}: {store.count_items()} items; "
        "add annotators with `python -m bigaction_assets.annotate.admin add-user NAME`",
        file=sys.stderr,
    )
    app = create_app(AppSettings(store_path, signer, Passwords()))
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="info",
        proxy_headers=False,
        **header_limits(args.header_seconds),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
