"""Release stage: the Hub dataset folder, built from the standardized and SFT tables."""

from importlib.metadata import version
from pathlib import Path

import dagster as dg

from bigaction_assets.defs.automation import AFTER_INPUTS_CHANGE
from bigaction_assets.defs.hub_resource import HubResource, hub_from_env
from bigaction_assets.defs.release.checks import RELEASE_DIR, failed_upstream_gates
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.sft.assets import SFT_VERSION
from bigaction_assets.defs.standardized.assets import STANDARDIZE_VERSION
from bigaction_assets.privacy.register import forgotten_rows
from bigaction_assets.release.build import EmptyRelease, ReleaseSettings, build_release
from bigaction_assets.release.provenance import NotRedistributable, lake_datasets, releasable
from bigaction_assets.release.published import publish_release
from bigaction_assets.release.shards import DEFAULT_SHARD_BYTES

RELEASE_VERSION = "2"  # 2: the `images` config, HF `Image` features
PIPELINE_VERSION = (
    f"{version('bigaction-assets')}+s{STANDARDIZE_VERSION}.f{SFT_VERSION}.r{RELEASE_VERSION}"
)


class HubReleaseConfig(dg.Config):
    exclude_datasets: list[str] = []  # noqa: RUF012 - pydantic copies defaults
    """Datasets (partition keys; a sharded dataset's `<adapter>.<dataset>` leaves out every
    shard) left out of the release, e.g. ones not redistributable."""
    max_shard_bytes: int = DEFAULT_SHARD_BYTES
    """Largest Parquet shard, in Arrow bytes."""
    pretty_name: str = "BigAction"
    license: str = "other"
    """License id for the card; `other` when the sources' licenses differ."""


def release_asset(hub: HubResource) -> dg.AssetsDefinition:
    """`hub_release` for the repository `hub` names (its card shows how to load it from there);
    the code location binds `ENVIRONMENT_HUB`. It never pushes: `hub_revision` does.

    The Hub is bound on the asset rather than in the top-level resources so that running the
    rest of the graph never needs one; tests build their own with a local Hub.
    """

    @dg.asset(
        group_name="release",
        kinds={"huggingface", "parquet"},
        deps=["episodes", "events", "images", "sft_examples"],
        code_version=RELEASE_VERSION,
        resource_defs={"hub": hub},
        automation_condition=AFTER_INPUTS_CHANGE,
    )
    def hub_release(
        context: dg.AssetExecutionContext,
        lake: LakeResource,
        hub: HubResource,
        config: HubReleaseConfig,
    ) -> dg.MaterializeResult:
        """The release folder: Parquet shards per config and split, a card, a manifest."""
        store = lake.store
        datasets = lake_datasets(store)
        try:
            kept = releasable(datasets, config.exclude_datasets)
            if problems := failed_upstream_gates(context, kept):
                raise dg.Failure("release blocked by upstream checks: " + "; ".join(problems))
            if held := forgotten_rows(store, lake.landing):  # now, not at the last run
                raise dg.Failure(f"release blocked: rows of forgotten senders remain: {held}")
            settings = ReleaseSettings(
                max_shard_bytes=config.max_shard_bytes,
                pretty_name=config.pretty_name,
                license=config.license,
                excluded=[d for d in datasets if d not in kept],
                pipeline={"bigaction-assets": PIPELINE_VERSION},
                config=config.model_dump(),
                repo_id=hub.repo_id,
            )
            if isinstance(store, Path):
                out = Path(lake.data_dir) / RELEASE_DIR
                release, where = build_release(store, lake.landing, out, kept, settings), str(out)
            else:  # beside an object-store lake, as data/release/ is beside data/lake/
                release, where = publish_release(store, lake.landing, kept, settings)
        except (NotRedistributable, EmptyRelease) as exc:
            raise dg.Failure(str(exc)) from exc
        context.log.info(f"release in {where}")
        return dg.MaterializeResult(
            metadata={
                "rows_by_config": dg.MetadataValue.json(release.rows),
                "dagster/row_count": sum(sum(s.values()) for s in release.rows.values()),
                "files": len(release.files),
                "bytes": release.bytes,
                "content_sha256": release.content_sha256,
                "datasets": kept,
                "excluded_datasets": settings.excluded,
                "path": dg.MetadataValue.path(where),
            }
        )

    return hub_release


# one resource for both release assets: a job holding both needs them to be the same object
ENVIRONMENT_HUB = hub_from_env()
hub_release = release_asset(ENVIRONMENT_HUB)
