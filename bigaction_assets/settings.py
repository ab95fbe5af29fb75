"""Where the factory reads its landing files and writes its lake, from the environment."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

DATA_DIR_ENV = "BIGACTION_DATA_DIR"
LANDING_DIR_ENV = "BIGACTION_LANDING_DIR"
LLM_CACHE_URL_ENV = "BIGACTION_LLM_CACHE_URL"
"""A PostgreSQL URL: the LLM call cache every worker of a cluster shares (else a local file)."""


@dataclass(frozen=True)
class Paths:
    """The three places the factory touches.

    Attributes:
        landing: raw input files, one folder per source adapter (`<landing>/<adapter>/...`).
        lake: Parquet tables, `<lake>/<group>/<asset>/<partition>.parquet`.
        catalog: the DuckDB file holding one view per lake table.
    """

    landing: Path
    lake: Path
    catalog: Path

    @classmethod
    def from_env(cls) -> Paths:
        data_dir = Path(os.environ.get(DATA_DIR_ENV) or PROJECT_ROOT / "data").resolve()
        landing = Path(os.environ.get(LANDING_DIR_ENV) or PROJECT_ROOT / "landing").resolve()
        return cls(landing=landing, lake=data_dir / "lake", catalog=data_dir / "bigaction.duckdb")
