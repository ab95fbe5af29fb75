"""Gates on the benchmark snapshot: one target among each valid step's choices, no repeats."""

from bigaction_assets.benchmark import quality
from bigaction_assets.defs.gates import blocking_lake_check, unique_keys_check
from bigaction_assets.defs.partitions import benchmark_datasets
from bigaction_assets.episode_ids import SNAPSHOT_STEPS

targets_among_choices = blocking_lake_check(
    "benchmark_snapshot",
    "targets_among_choices",
    "steps whose choices hold the wrong number of targets",
    quality.misplaced_targets,
    "A valid step's choices hold exactly one target; an invalid step's hold none.",
    per_partition=True,
    partitions_def=benchmark_datasets,
)


snapshot_steps_unique = unique_keys_check(
    "benchmark_snapshot",
    "snapshot_steps_unique",
    SNAPSHOT_STEPS,
    "snapshot-step-hashes",
    "steps that appear more than once",
    "Every (episode, step) appears once across all partitions of the snapshot.",
)
