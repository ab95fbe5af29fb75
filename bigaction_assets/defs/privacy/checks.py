"""`forgotten_users_absent`: a blocking check, attachable to any table whose rows carry a sender
pseudonym, an `episode_id`, or a `record_id`/`example_id` of the form `<episode id>#<n>`; in a
partitioned run it looks at the run's partitions only, else at all of them."""

from pathlib import Path

import dagster as dg

from bigaction_assets.defs.gates import offenders_result
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.reward.resources import open_store
from bigaction_assets.privacy.register import load_forgotten, release_offenders, table_offenders
from bigaction_assets.release.published import release_root

CHECK_NAME = "forgotten_users_absent"
ERASURE = "forgotten_users"
WHAT = "partition files holding rows of senders who asked to be forgotten"


def forgotten_users_absent(asset: str, group: str) -> dg.AssetChecksDefinition:
    """The check for the lake table `<group>/<asset>` (every partition)."""

    @dg.asset_check(
        asset=asset,
        name=CHECK_NAME,
        blocking=True,
        additional_deps=[ERASURE],  # in the forget job, the check runs after the erasure
        description="No row of a sender who asked to be forgotten (pseudonyms and episodes).",
    )
    def _check(context: dg.AssetCheckExecutionContext, lake: LakeResource) -> dg.AssetCheckResult:
        forgotten = load_forgotten(lake.store, lake.landing)
        partitions = run_partitions(context, asset)
        offenders = table_offenders(lake.store, group, asset, forgotten, partitions)
        result = offenders_result(offenders, WHAT)
        scope = "every partition" if partitions is None else ", ".join(partitions)
        return result.with_metadata({**result.metadata, "partitions_checked": scope})

    return _check


def run_partitions(context: dg.AssetCheckExecutionContext, asset: str) -> list[str] | None:
    """The partitions of `asset` the run builds (None: a run without any, or an unpartitioned
    asset, where every file is checked): a dataset's run answers for that dataset only, so a
    forgotten sender's rows still waiting in another dataset (until the erasure or that
    dataset's own rebuild) never fail it."""
    run = context.op_execution_context
    node = run.job_def.asset_layer.asset_graph.get(dg.AssetKey(asset))
    if node.partitions_def is None:
        return None
    if run.has_partition_key:  # the key itself: `partition_keys` asks the instance for the range
        return [run.partition_key]
    if run.has_partition_key_range:
        return list(run.partition_keys)
    return None


raw_telemetry_forgotten = forgotten_users_absent("raw_telemetry", "telemetry")
telemetry_rejects_forgotten = forgotten_users_absent("telemetry_rejects", "telemetry")
raw_records_forgotten = forgotten_users_absent("raw_records", "raw")
episodes_forgotten = forgotten_users_absent("episodes", "standardized")
events_forgotten = forgotten_users_absent("events", "standardized")
web_candidates_forgotten = forgotten_users_absent("web_candidates", "standardized")
rejects_forgotten = forgotten_users_absent("rejects", "standardized")
sft_examples_forgotten = forgotten_users_absent("sft_examples", "sft")
benchmark_snapshot_forgotten = forgotten_users_absent("benchmark_snapshot", "benchmark")
thoughts_forgotten = forgotten_users_absent("thoughts", "thoughts")
model_answers_forgotten = forgotten_users_absent("model_answers", "benchmark")
eval_results_forgotten = forgotten_users_absent("eval_results", "benchmark")
annotation_items_forgotten = forgotten_users_absent("annotation_items", "reward")
annotations_forgotten = forgotten_users_absent("annotations", "reward")
reward_examples_forgotten = forgotten_users_absent("reward_examples", "reward")


@dg.asset_check(
    asset="annotations",
    name="annotation_store_forgotten",
    blocking=True,
    additional_deps=[ERASURE],
    description="The annotation app's store holds no item or label of a forgotten sender.",
)
def annotation_store_forgotten(lake: LakeResource) -> dg.AssetCheckResult:
    forgotten = load_forgotten(lake.store, lake.landing)
    stored = lake.annotation_store.is_file()
    held = open_store(lake).items_of(forgotten.episodes) if stored else set()
    offenders = [{"file": f"store item {item}", "rows": 1} for item in sorted(held)]
    return offenders_result(offenders, "items in the annotation store of forgotten senders")


@dg.asset_check(
    asset="hub_release",
    name=CHECK_NAME,
    blocking=True,
    additional_deps=[ERASURE],
    description="No shard of the release holds a row of a forgotten sender.",
)
def hub_release_forgotten(lake: LakeResource) -> dg.AssetCheckResult:
    store = lake.store
    forgotten = load_forgotten(store, lake.landing)
    release = Path(lake.data_dir) / "release" if isinstance(store, Path) else release_root(store)
    return offenders_result(release_offenders(release, forgotten), WHAT)


FORGET_CHECKS = (
    raw_telemetry_forgotten, telemetry_rejects_forgotten, raw_records_forgotten,
    episodes_forgotten, events_forgotten,
    web_candidates_forgotten, rejects_forgotten, sft_examples_forgotten,
    benchmark_snapshot_forgotten, thoughts_forgotten, model_answers_forgotten,
    eval_results_forgotten,
    hub_release_forgotten, annotation_items_forgotten, annotations_forgotten,
    reward_examples_forgotten, annotation_store_forgotten,
)  # fmt: skip
