"""Gates on the benchmark snapshot: one target among each valid step's choices, no repeats."""

from bigaction_assets.benchmark import quality
from bigaction_assets.defs.gates import blocking_lake_check

targets_among_choices = blocking_lake_check(
    "benchmark_snapshot",
    "targets_among_choices",
    "steps whose choices hold the wrong number of targets",
    quality.misplaced_targets,
    "A valid step's choices hold exactly one target; an invalid step's hold none.",
)
snapshot_steps_unique = blocking_lake_check(
    "benchmark_snapshot",
    "snapshot_steps_unique",
    "steps that appear more than once",
    quality.repeated_steps,
    "Every (episode, step) appears once across all partitions of the snapshot.",
)
