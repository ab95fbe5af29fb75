"""The jobs: one landing dataset through the spine, its benchmark, and the cross-dataset outputs.

Runs go in one process (the code location's default executor; the per-dataset jobs can run
either way, chosen per run). A step in a process of its own pays that process's start-up (~3 s
here, loading Dagster and the definitions, more under load): a two-record dataset took 2 min 8 s
that way under `make ui`, and it never paid back on this graph, whose stages mostly wait on one
another (benchmarks/ui_flow.py: 91 s against 6 s for 100 MB of ADP). A large dataset's
parallelism lives elsewhere and is kept: `sft_examples` renders with a process per core from
4,000 episodes, and two runs (datasets) go at once.
"""

import os
from typing import Any

import dagster as dg

from bigaction_assets.defs.executors import dataset_executor, distributed

# Landing size from which a dataset's run gets a process per step; unset, never. For a machine
# or a graph where independent heavy steps (e.g. a slow live model beside long checks) pay for it.
PROCESSES_FROM_ENV = "BIGACTION_PROCESSES_FROM_MB"
PROCESSES_FROM_BYTES: int | None = None


def execution_config(landing_bytes: int) -> dict[str, Any]:
    """Run config for a dataset's run: one process, or one per step from the configured size;
    none in a cluster, where every step is a Celery task or a pod of its own."""
    if distributed():
        return {}
    setting = os.environ.get(PROCESSES_FROM_ENV)
    threshold = int(float(setting) * (1 << 20)) if setting else PROCESSES_FROM_BYTES
    many = threshold is not None and landing_bytes >= threshold
    return {"execution": {"config": {"multiprocess" if many else "in_process": {}}}}


# The SFT files close the dataset's own run (after its examples' blocking checks) rather than
# wait for the automation sensor's next look and a run of their own: a new dataset reaches them
# ~9 s sooner. They hold every dataset's examples; runs at once take turns writing them.
dataset_job = dg.define_asset_job(
    "build_dataset",
    selection=dg.AssetSelection.groups("raw", "standardized")
    | dg.AssetSelection.assets("thoughts", "sft_examples", "sft_files"),
    executor_def=dataset_executor(),
    description=(
        "Builds one landing dataset: raw records, standardized tables, generated thoughts and "
        "SFT examples, then rewrites the SFT files. Its benchmark partition follows "
        "(score_dataset)."
    ),
)

unread_files_job = dg.define_asset_job(
    "list_unread_landing_files",
    selection=dg.AssetSelection.assets("unread_landing_files"),
    description="Lists the landing files nothing reads, with why (the landing sensor runs it "
    "when that list changes).",
)

# The benchmark's partitions are the landing datasets without the telemetry days, so it is a
# job of its own; under `make ui` the automation sensor runs it after build_dataset.
benchmark_job = dg.define_asset_job(
    "score_dataset",
    selection=dg.AssetSelection.assets("benchmark_snapshot", "model_answers", "eval_results"),
    description="Builds one dataset's benchmark steps, a live model's answers (when one is "
    "set) and the scores of every model with predictions.",
)

sft_files_job = dg.define_asset_job(
    "write_sft_files",
    selection=dg.AssetSelection.assets("sft_files"),
    description="Writes the SFT training files from every dataset's examples.",
)

release_job = dg.define_asset_job(
    "publish_release",
    selection=dg.AssetSelection.assets("hub_release", "hub_revision"),
    description="Builds the release folder from the lake and pushes it to the Hub when a Hub "
    "repo and token are set: the only way a release reaches the Hub.",
)

leaderboard_job = dg.define_asset_job(
    "rank_models",
    selection=dg.AssetSelection.assets("leaderboard"),
    description="Ranks every model with predictions, per split, from every dataset's scores.",
)

# --- telemetry (#6): new batches into the raw layer; a finished day through the spine ---
telemetry_batches_job = dg.define_asset_job(
    "ingest_telemetry_batches",
    selection=dg.AssetSelection.assets("raw_telemetry", "telemetry_rejects"),
    description="Ingests landed telemetry batches into raw_telemetry (each batch once).",
)

telemetry_day_job = dg.define_asset_job(
    "build_telemetry_day",
    selection=dg.AssetSelection.assets("raw_records", "telemetry_report")
    | dg.AssetSelection.assets("thoughts", "sft_examples")
    | dg.AssetSelection.groups("standardized"),
    executor_def=dataset_executor(),
    description="Compacts one day of telemetry batches into raw_records, then standardized "
    "episodes, generated thoughts and SFT examples, and refreshes the daily report.",
)

# --- reward (#7): items into the annotation app, its labels into the lake, reward sets ---
reward_job = dg.define_asset_job(
    "build_reward_examples",
    selection=dg.AssetSelection.assets("annotation_items", "annotations", "reward_examples"),
    description="Loads items to label into the annotation app, reads its labels into the lake "
    "and builds the reward sets (with the bundled annotated reward data).",
)

annotations_job = dg.define_asset_job(
    "collect_annotations",
    selection=dg.AssetSelection.assets("annotations", "reward_examples"),
    description="Reads the annotation app's labels into the lake and rebuilds the reward sets.",
)
