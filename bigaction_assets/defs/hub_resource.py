"""The Hub resource: where a release is published beyond its local folder.

huggingface_hub is imported when a release is pushed, not with the definitions: its client cost
every process that loads the code location (each run, each `dagster asset materialize`, each
Celery worker) ~0.12 CPU s (2.79 -> 2.67 s, benchmarks/README.md), for one asset's use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

if TYPE_CHECKING:
    from bigaction_assets.release.hub import PushOutcome

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

    def publish(self, folder: Path, version: str, content_sha256: str) -> PushOutcome | None:
        """Push the release in `folder`; None when this resource is not set up to push."""
        if not self.enabled:
            return None
        from huggingface_hub import HfApi

        from bigaction_assets.release import hub

        api = HfApi(endpoint=self.endpoint, token=self.token, library_name="bigaction-assets")
        tag = self.tag_template.format(version=version, hash=content_sha256[:12])
        return hub.push_release(
            api, folder, self.repo_id, tag=tag, revision=self.revision, private=self.private
        )


def hub_from_env() -> HubResource:
    """Pushes only when `BIGACTION_HUB_REPO` and `HF_TOKEN` are both set."""
    token = dg.EnvVar(HUB_TOKEN_ENV) if os.environ.get(HUB_TOKEN_ENV) else None
    return HubResource(repo_id=os.environ.get(HUB_REPO_ENV) or None, token=token)
