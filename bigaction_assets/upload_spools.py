"""Local spool files that hold an object's bytes until they are uploaded, and the sweep of
those a killed process left."""

from __future__ import annotations

import functools
import logging
import tempfile
from pathlib import Path

from bigaction_assets.durable import TMP_SUFFIX, HeldFile, remove_abandoned

log = logging.getLogger(__name__)

SPOOL_PREFIX = "bigaction-spool-"
ABANDONED_AFTER_S = 60.0
"""A temporary file left unlocked this long has lost its writer (one younger may be a writer's
that has created it and not yet locked it)."""


def remove_abandoned_spools() -> list[Path]:
    """Delete the spool files in the temporary folder whose process was killed before it could
    (a live one holds its spool locked); a worker killed mid-upload leaves up to a partition's
    size of them. Returns what was removed."""
    folder = Path(tempfile.gettempdir())
    spools = sorted(folder.glob(f"{SPOOL_PREFIX}*{TMP_SUFFIX}"))
    removed = remove_abandoned(spools, min_age_s=ABANDONED_AFTER_S)
    for path in removed:
        log.warning("removed a spool file a killed process left: %s", path)
    return removed


@functools.cache
def _spools_swept() -> bool:
    remove_abandoned_spools()
    return True


def new_spool() -> HeldFile:
    """A fresh local file, held while in use, to write an object's bytes into before they are
    uploaded. A process's first one sweeps away those of killed processes."""
    _spools_swept()
    return HeldFile.in_temp_folder(SPOOL_PREFIX)
