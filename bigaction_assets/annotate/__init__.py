"""The annotation app: people label web-agent steps and proactive-assistant turns; the store
feeds `annotations` and `reward_examples`. Serve it with `make annotate`."""

from __future__ import annotations

from pathlib import Path

from bigaction_assets.settings import Paths

STORE_FILE = "store.sqlite3"


def default_store_path() -> Path:
    """`<data dir>/annotate/store.sqlite3` (the data dir is `BIGACTION_DATA_DIR`)."""
    return Paths.from_env().lake.parent / "annotate" / STORE_FILE
