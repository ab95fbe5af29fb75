"""Quality gates on the standardized tables; the blocking ones stop bad data flowing on."""

import dagster as dg

from bigaction_assets import quality
from bigaction_assets.defs.gates import (
    PER_PARTITION_NOTE,
    blocking_lake_check,
    offenders_result,
    unique_keys_check,
)
from bigaction_assets.defs.partitions import datasets_partitions
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.episode_ids import EPISODES
from bigaction_assets.images.verify import undecodable_images, unresolved_image_shas
from bigaction_assets.row_counts import RowCounts

episode_ids_unique = unique_keys_check(
    "episodes",
    "episode_ids_unique",
    EPISODES,
    "episode-id-hashes",
    "duplicated episode ids",
    "Every episode_id appears once across all datasets.",
)
event_episodes_exist = blocking_lake_check(
    "events",
    "event_episodes_exist",
    "episodes with events but no episode row",
    quality.orphan_events,
    "Every event belongs to an episode in `episodes`.",
    per_partition=True,
)
event_idx_contiguous = blocking_lake_check(
    "events",
    "event_idx_contiguous",
    "episodes with gaps or extra events",
    quality.noncontiguous_episodes,
    "Within an episode, idx runs 0..n-1 and n equals the episode's num_events.",
    per_partition=True,
)
html_shas_resolve = blocking_lake_check(
    "events",
    "html_shas_resolve",
    "events whose page is missing",
    quality.unresolved_html_shas,
    "Every html_sha in events has its page in dom_snapshots.",
    per_partition=True,
)
image_shas_resolve = blocking_lake_check(
    "events",
    "image_shas_resolve",
    "events whose image is missing",
    unresolved_image_shas,
    "Every image_sha and answer_image_sha in events has its image in `images`.",
    per_partition=True,
)
event_kinds_known = blocking_lake_check(
    "events", "event_kinds_known", "event kind/actor pairs outside the enums",
    quality.unknown_kinds_or_actors, "Event kinds and actors are within their enums.",
    per_partition=True,
)  # fmt: skip


class RejectRateConfig(dg.Config):
    max_reject_rate: float = 0.05
    """Largest acceptable share of a dataset's records that end in `rejects`."""


@dg.asset_check(
    asset="rejects",
    description="Each dataset's share of rejected records stays under a threshold (warning). "
    + PER_PARTITION_NOTE,
    partitions_def=datasets_partitions,
)
def reject_rate_under_threshold(
    context: dg.AssetCheckExecutionContext, lake: LakeResource, config: RejectRateConfig
) -> dg.AssetCheckResult:
    """From the partitions' footers (no row read); a dataset's step answers for that dataset,
    so one dataset over the threshold does not flag every other dataset's build."""
    partitions = [context.partition_key] if context.has_partition_key else None
    rates = quality.reject_rates(lake.store, partitions, RowCounts(lake.row_counts))
    over = [r for r in rates if r["reject_rate"] > config.max_reject_rate]
    return dg.AssetCheckResult(
        passed=not over,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"{len(over)} dataset(s) over {config.max_reject_rate:.0%} rejected"
            if over
            else f"every dataset under {config.max_reject_rate:.0%} rejected"
        ),
        metadata={"reject_rates": dg.MetadataValue.json(rates)},
    )


class ImagesDecodeConfig(dg.Config):
    decoded_share: float = 1.0
    """Share of the stored images to decode (picked by hash, the same ones each run): all by
    default; a lake of millions of screenshots may check a sample."""


@dg.asset_check(
    asset="images",
    blocking=True,
    description="Each image's bytes hash to its image_sha, are byte_size long, have the "
    "format and dimensions of its row, and decode (Pillow) to those dimensions. "
    + PER_PARTITION_NOTE,
    partitions_def=datasets_partitions,
)
def images_decode(
    context: dg.AssetCheckExecutionContext, lake: LakeResource, config: ImagesDecodeConfig
) -> dg.AssetCheckResult:
    """Decodes the images of the partition a step built, not every stored image at each step:
    a partition's images are its own copies, so each copy is decoded once, when it is written."""
    partitions = [context.partition_key] if context.has_partition_key else None
    return offenders_result(
        undecodable_images(lake.store, config.decoded_share, partitions=partitions),
        "images that do not decode as stored",
    )
