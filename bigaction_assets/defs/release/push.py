"""The push: the local release folder as a revision of the Hub repository, only when launched.

`hub_release` (the folder) follows its inputs by itself under `make ui`; `hub_revision` has no
automation condition, so the Hub changes only when someone launches `publish_release` (or
materializes it), and then only through the gates below, checked at push time.
"""

import json
import tempfile
from pathlib import Path

import dagster as dg

from bigaction_assets.defs.hub_resource import HubResource
from bigaction_assets.defs.release.assets import ENVIRONMENT_HUB, PIPELINE_VERSION, RELEASE_VERSION
from bigaction_assets.defs.release.checks import RELEASE_DIR
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.privacy.register import load_forgotten, release_offenders
from bigaction_assets.release.build import MANIFEST, file_digests
from bigaction_assets.release.published import download_release, release_root

NOT_CONFIGURED = "not configured (local folder only)"


def push_problems(folder: Path, lake: LakeResource) -> list[str]:
    """Why the folder may not be pushed now: it is missing, differs from its manifest, or holds
    rows of a sender who asked to be forgotten since it was built."""
    if not (folder / MANIFEST).is_file():
        return [f"no release in {folder}: materialize hub_release first"]
    recorded = json.loads((folder / MANIFEST).read_text())["files"]
    actual = file_digests(folder)
    differ = sorted(p for p in set(recorded) | set(actual) if recorded.get(p) != actual.get(p))
    if differ:  # a file not as built may not even be Parquet: say so and read no further
        return [f"{path} differs from the manifest" for path in differ]
    held = release_offenders(folder, load_forgotten(lake.store, lake.landing))
    return [f"{o['file']} holds {o['rows']} rows of forgotten senders" for o in held]


def revision_asset(hub: HubResource) -> dg.AssetsDefinition:
    """`hub_revision` pushing through `hub`; the code location binds `ENVIRONMENT_HUB`."""

    @dg.asset(
        group_name="release",
        kinds={"huggingface"},
        deps=["hub_release"],
        code_version=RELEASE_VERSION,
        resource_defs={"hub": hub},
    )
    def hub_revision(
        context: dg.AssetExecutionContext, lake: LakeResource, hub: HubResource
    ) -> dg.MaterializeResult:
        """The release folder committed and tagged on the Hub, when a Hub repo and token are set."""
        store = lake.store
        where = str(Path(lake.data_dir) / RELEASE_DIR)
        if not isinstance(store, Path):
            where = release_root(store).uri
        if not hub.enabled:
            context.log.info(f"no Hub configured: the release stays in {where}")
            metadata = {"hub": NOT_CONFIGURED, "hub_commit": "none", "hub_tag": "none"}
            return dg.MaterializeResult(metadata=metadata)
        if isinstance(store, Path):
            return push(context, Path(where), lake, hub, where)
        # beside an object-store lake: pushed from a local copy, checked before it leaves
        with tempfile.TemporaryDirectory(prefix="bigaction-push-") as folder:
            copy = download_release(release_root(store), Path(folder))
            return push(context, copy, lake, hub, where)

    return hub_revision


def push(
    context: dg.AssetExecutionContext, folder: Path, lake: LakeResource, hub: HubResource,
    where: str,
) -> dg.MaterializeResult:  # fmt: skip
    """The release in the local `folder` (a copy of the one at `where`) pushed through `hub`,
    once the gates allow it."""
    if problems := push_problems(folder, lake):
        raise dg.Failure("push blocked: " + "; ".join(problems))
    digest = json.loads((folder / MANIFEST).read_text())["content_sha256"]
    pushed = hub.publish(folder, PIPELINE_VERSION, digest)
    assert pushed is not None  # hub.enabled
    context.log.info(f"release in {where} pushed to {pushed.url}")
    return dg.MaterializeResult(
        metadata={
            "hub": pushed.repo_id,
            "hub_commit": pushed.commit or "unchanged",
            "hub_tag": pushed.tag,
            "content_sha256": digest,
            "url": dg.MetadataValue.url(pushed.url),
        }
    )


hub_revision = revision_asset(ENVIRONMENT_HUB)
