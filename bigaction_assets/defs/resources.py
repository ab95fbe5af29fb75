"""Resources shared by every stage: the lake (landing, Parquet files, DuckDB catalog), the Hub."""

import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource
from huggingface_hub import HfApi
from pydantic import Field

from bigaction_assets import lake
from bigaction_assets.annotate import STORE_FILE
from bigaction_assets.release import hub
from bigaction_assets.settings import Paths


class LakeResource(dg.ConfigurableResource):
    """Where landing files are read and lake tables written; the local disk by default."""

    landing_dir: str
    data_dir: str

    @property
    def landing(self) -> Path:
        return Path(self.landing_dir)

    @property
    def root(self) -> Path:
        return Path(self.data_dir) / "lake"

    @property
    def catalog(self) -> Path:
        return Path(self.data_dir) / "bigaction.duckdb"

    annotation_store_path: str | None = None
    """The annotation app's SQLite store; `<data_dir>/annotate/store.sqlite3` when unset (where
    `make annotate` serves it from)."""

    @property
    def annotation_store(self) -> Path:
        default = Path(self.data_dir) / "annotate" / STORE_FILE
        return Path(self.annotation_store_path) if self.annotation_store_path else default

    def refresh_catalog(self, log: dg.DagsterLogManager | None = None) -> list[str]:
        """Views over every table; a locked catalog is reported, not fatal (views glob files,
        so new partitions of known tables show up without a refresh)."""
        try:
            return lake.refresh_catalog(self.root, self.catalog)
        except Exception as exc:  # the catalog is a convenience; the lake is the truth
            if log is not None:
                log.warning(f"DuckDB catalog {self.catalog} not refreshed: {exc}")
            return []


HUB_REPO_ENV = "BIGACTION_HUB_REPO"
HUB_TOKEN_ENV = "HF_TOKEN"


class HubResource(dg.ConfigurableResource):
    """Where a release is published beyond its local folder: a Hub dataset repository when a
    repo id and a token are set, nowhere else otherwise."""

    repo_id: str | None = None
    """`<namespace>/<name>` of the dataset repository; unset keeps releases local."""
    token: str | None = Field(default=None, repr=False)
    """A write token; bind it with `dg.EnvVar("HF_TOKEN")` so its value is never stored."""
    private: bool = True
    """Visibility of the repository when the push creates it."""
    revision: str = "main"
    """Branch the release is committed to (it must exist; `main` always does)."""
    tag_template: str = "v{version}-{hash}"
    """Tag of each new release: `{version}` is the pipeline version, `{hash}` 12 hex digits
    of the release's content hash."""
    endpoint: str | None = None
    """Hub URL; unset means huggingface_hub's default (`HF_ENDPOINT`, else huggingface.co)."""

    @property
    def enabled(self) -> bool:
        return bool(self.repo_id and self.token)

    def publish(self, folder: Path, version: str, content_sha256: str) -> hub.PushOutcome | None:
        """Push the release in `folder`; None when this resource is not set up to push."""
        if not self.enabled:
            return None
        api = HfApi(endpoint=self.endpoint, token=self.token, library_name="bigaction-assets")
        tag = self.tag_template.format(version=version, hash=content_sha256[:12])
        return hub.push_release(
            api, folder, self.repo_id, tag=tag, revision=self.revision, private=self.private
        )


def hub_from_env() -> HubResource:
    """Pushes only when `BIGACTION_HUB_REPO` and `HF_TOKEN` are both set."""
    token = dg.EnvVar(HUB_TOKEN_ENV) if os.environ.get(HUB_TOKEN_ENV) else None
    return HubResource(repo_id=os.environ.get(HUB_REPO_ENV) or None, token=token)


def local_resources(paths: Paths | None = None) -> dict[str, object]:
    """The embedded default: everything on local disk, paths from the environment."""
    paths = paths or Paths.from_env()
    data_dir = paths.lake.parent
    return {
        "lake": LakeResource(landing_dir=str(paths.landing), data_dir=str(data_dir)),
        "duckdb": DuckDBResource(database=str(paths.catalog)),
    }
