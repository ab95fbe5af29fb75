"""The per-dataset job: one landing dataset through every partitioned stage."""

import dagster as dg

dataset_job = dg.define_asset_job(
    "build_dataset",
    selection=dg.AssetSelection.groups("raw", "standardized")
    | dg.AssetSelection.assets("thoughts", "sft_examples")
    | dg.AssetSelection.assets("benchmark_snapshot", "model_answers", "eval_results"),
    description=(
        "Builds one landing dataset: raw records, standardized tables, generated thoughts, "
        "SFT examples, benchmark steps, a live model's answers (when one is set) and scores."
    ),
)

unread_files_job = dg.define_asset_job(
    "list_unread_landing_files",
    selection=dg.AssetSelection.assets("unread_landing_files"),
    description="Lists the landing files nothing reads, with why (the landing sensor runs it "
    "when that list changes).",
)

sft_files_job = dg.define_asset_job(
    "write_sft_files",
    selection=dg.AssetSelection.assets("sft_files"),
    description="Writes the SFT training files from every dataset's examples.",
)

release_job = dg.define_asset_job(
    "publish_release",
    selection=dg.AssetSelection.assets("hub_release"),
    description="Builds the release folder from the lake and pushes it when a Hub repo is set.",
)

leaderboard_job = dg.define_asset_job(
    "rank_models",
    selection=dg.AssetSelection.assets("leaderboard"),
    description="Ranks every model with predictions, per split, from every dataset's scores.",
)

# --- telemetry (#6): new batches into the raw layer; a finished day through the spine ---
telemetry_batches_job = dg.define_asset_job(
    "ingest_telemetry_batches",
    selection=dg.AssetSelection.assets("raw_telemetry"),
    description="Ingests landed telemetry batches into raw_telemetry (each batch once).",
)

telemetry_day_job = dg.define_asset_job(
    "build_telemetry_day",
    selection=dg.AssetSelection.assets("raw_records", "telemetry_report")
    | dg.AssetSelection.assets("thoughts", "sft_examples")
    | dg.AssetSelection.groups("standardized"),
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
