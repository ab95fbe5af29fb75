"""The Dagster home `make demo` and `make ui` share, holding the project's instance settings."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from bigaction_assets.settings import PROJECT_ROOT, Paths

SHIPPED = PROJECT_ROOT / "dagster.yaml"
# sha256 of each dagster.yaml the project shipped before the current one. A home still holding
# one of them byte for byte was copied there and never edited, so it takes the current settings;
# a copy someone edited is theirs and stays. Add the old hash here when dagster.yaml changes.
EARLIER_SHIPPED = frozenset(
    {
        "8f2393c6bd95f0dc56c89c2af8e85977a9279254c7166a87ba7fe02247a5e507",
        "174aa9480d7c154e5a5f69be7f02975867270798f94b5d3457bfa134e1ee14f1",
    }
)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prepare_dagster_home(paths: Paths) -> Path:
    """Use $DAGSTER_HOME, or `<data>/dagster`, holding the project's dagster.yaml (copied when
    missing, or brought up to date when it is an unedited copy of an earlier one)."""
    home = Path(os.environ.get("DAGSTER_HOME") or paths.lake.parent / "dagster")
    home.mkdir(parents=True, exist_ok=True)
    settings = home / "dagster.yaml"
    if not settings.exists() or _sha256(settings) in EARLIER_SHIPPED:
        shutil.copy(SHIPPED, settings)
    os.environ["DAGSTER_HOME"] = str(home)
    return home
