"""The lake resource every stage shares (landing, Parquet files, DuckDB catalog), and the
resources the code location binds by default."""

import functools
import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from bigaction_assets.annotate import STORE_FILE
from bigaction_assets.catalog import refresh_catalog
from bigaction_assets.lake import Lake, local_root
from bigaction_assets.lake_uri import LAKE_URI_ENV, parse_lake
from bigaction_assets.llm.cache import CacheLocation
from bigaction_assets.settings import LLM_CACHE_URL_ENV, Paths


class LakeResource(dg.ConfigurableResource):
    """Where landing files are read and lake tables written; the local disk by default."""

    landing_dir: str
    data_dir: str
    lake_uri: str | None = None
    """The lake's root as a URI (`s3://bucket/prefix`, lakefs.py); `<data_dir>/lake` when unset."""

    @property
    def landing(self) -> Path:
        return Path(self.landing_dir)

    @property
    def store(self) -> Lake:
        """The lake for the stages that read and write it through lake.py: a local folder, or
        an object store when `lake_uri` names one."""
        if self.lake_uri:
            return _lake_at(self.lake_uri)
        return Path(self.data_dir) / "lake"

    @property
    def is_local(self) -> bool:
        return isinstance(self.store, Path)

    @property
    def root(self) -> Path:
        """The lake as a local folder, for the stages that still read it as files."""
        store = self.store
        if not isinstance(store, Path):
            raise NotOnObjectStore(
                f"the lake is {self.lake_uri}, and this stage still reads the lake as local "
                "files (docs/deploy.md, 'The lake on object storage', lists the stages that "
                "run on an object store)"
            )
        return store

    @property
    def catalog(self) -> Path:
        return Path(self.data_dir) / "bigaction.duckdb"

    @property
    def caches(self) -> Path:
        """This machine's caches of what it read from the lake (by file version: any of them
        may be deleted, at the cost of reading again)."""
        return Path(self.data_dir) / "cache"

    @property
    def row_counts(self) -> Path:
        return self.caches / "footer-rows.sqlite"

    annotation_store_path: str | None = None
    """The annotation app's SQLite store; `<data_dir>/annotate/store.sqlite3` when unset (where
    `make annotate` serves it from)."""

    @property
    def annotation_store(self) -> Path:
        default = Path(self.data_dir) / "annotate" / STORE_FILE
        return Path(self.annotation_store_path) if self.annotation_store_path else default

    llm_cache_url: str | None = None
    """A PostgreSQL URL for an LLM call cache every worker shares (cache_postgres.py); the
    SQLite file `<data_dir>/llm/calls.sqlite` when unset."""

    @property
    def llm_cache(self) -> CacheLocation:
        """The durable LLM call cache; erasure of forgotten senders reaches it here."""
        return self.llm_cache_url or Path(self.data_dir) / "llm" / "calls.sqlite"

    def refresh_catalog(self, log: dg.DagsterLogManager | None = None) -> list[str]:
        """Views over every table; a locked catalog is reported, not fatal (views glob files,
        so new partitions of known tables show up without a refresh)."""
        try:
            return refresh_catalog(self.store, self.catalog)
        except Exception as exc:  # the catalog is a convenience; the lake is the truth
            if log is not None:
                log.warning(f"DuckDB catalog {self.catalog} not refreshed: {exc}")
            return []


@functools.cache
def _lake_at(uri: str) -> Lake:
    """One filesystem per lake URI for the process (pyarrow's S3 client is costly to make)."""
    root = parse_lake(uri)
    return local_root(root) or root


class NotOnObjectStore(RuntimeError):
    """A stage that reads the lake as local files met an object-store lake."""


def local_resources(paths: Paths | None = None) -> dict[str, object]:
    """The embedded default: everything on local disk, paths from the environment."""
    paths = paths or Paths.from_env()
    data_dir = paths.lake.parent
    return {
        "lake": LakeResource(
            landing_dir=str(paths.landing),
            data_dir=str(data_dir),
            lake_uri=os.environ.get(LAKE_URI_ENV) or None,
            llm_cache_url=os.environ.get(LLM_CACHE_URL_ENV) or None,
        ),
        "duckdb": DuckDBResource(database=str(paths.catalog)),
    }
