"""Benchmark stage: a snapshot of steps per dataset, answers scored per dataset, a leaderboard.

The snapshot and the scores are partitioned like their inputs (one landing dataset each): a new
dataset builds only its own steps, a rerun replaces only its partition, and a step's choices do
not depend on the partition it sits in (they are drawn from its own task and step). Mind2Web's
datasets are named by split, so a partition never mixes a test split with train data. The
leaderboard is one table across datasets, per model and split.
"""

import base64
from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg

from bigaction_assets.benchmark.chart import leaderboard_svg
from bigaction_assets.benchmark.evaluate import evaluate_rows, prediction_files, read_predictions
from bigaction_assets.benchmark.inputs import (
    iter_benchmark_episodes,
    names_operations,
    snapshot_rows,
)
from bigaction_assets.benchmark.leaderboard import ALL_SPLITS, leaderboard_rows, markdown_table
from bigaction_assets.benchmark.live import live_predictions
from bigaction_assets.benchmark.prompts import PROMPT_VERSION
from bigaction_assets.benchmark.snapshot import SnapshotSettings, episode_rows
from bigaction_assets.defs.automation import AFTER_INPUTS_CHANGE, WITH_ITS_DATASET
from bigaction_assets.defs.metadata import (
    column_schema,
    image_thumbnail,
    markdown_preview,
    totals_across_partitions,
)
from bigaction_assets.defs.partitions import SAME_DATASET, benchmark_datasets
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.durable import write_durably
from bigaction_assets.lake_reader import iter_table_rows
from bigaction_assets.lake_writer import open_partition, write_partition
from bigaction_assets.schemas import arrow_schema, frame
from bigaction_assets.schemas.benchmark import (
    BenchmarkSnapshotSchema,
    EvalResultSchema,
    LeaderboardSchema,
)
from bigaction_assets.sink import ValidatedSink

GROUP = "benchmark"
# Bump when what a step shows or how it is scored changes; prompts carry their own version.
# 2: a step carries its screenshot (image_sha), is valid only with it, and text_only_valid;
# results and the leaderboard are per mode (screenshot or text)
BENCHMARK_VERSION = f"2.{PROMPT_VERSION}"
EVAL_RESULTS_VERSION = f"{BENCHMARK_VERSION}.2"  # .2: rows carry their episode_id
EVAL_COLUMNS = [
    "task_id", "step", "episode_id", "dataset", "split", "is_valid", "text_only_valid",
    "choices_sha", "candidate_ids", "target_ids", "target_op", "target_op_value",
]  # fmt: skip


class BenchmarkSnapshotConfig(dg.Config):
    k: int = 20
    """Negative candidates drawn per step (all of them when a step has fewer)."""
    seed: int = 42
    """Seed of the draw; with the task id and step it fixes every step's choices."""
    prune_html: bool = True
    """Show the page pruned to the choices, their ancestors and nearby siblings."""
    siblings: int = 2
    """Nearby siblings kept on each side of a choice when pruning."""


class EvalResultsConfig(dg.Config):
    predictions: str = "predictions"
    """A predictions JSONL file or a folder of them; relative paths are under the landing dir."""


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    partitions_def=benchmark_datasets,
    deps=[
        dg.AssetDep(spine, partition_mapping=SAME_DATASET)
        for spine in ("episodes", "events", "dom_snapshots", "images", "web_candidates")
    ],
    code_version=BENCHMARK_VERSION,
    automation_condition=WITH_ITS_DATASET,
    metadata={"dagster/column_schema": column_schema(BenchmarkSnapshotSchema)},
)
def benchmark_snapshot(
    context: dg.AssetExecutionContext, lake: LakeResource, config: BenchmarkSnapshotConfig
) -> dg.MaterializeResult:
    """One row per web step: cleaned page, k sampled choices plus the target, two prompts."""
    settings = SnapshotSettings(config.k, config.seed, config.prune_html, config.siblings)
    key = context.partition_key
    invalid: Counter[str] = Counter()
    splits: Counter[str] = Counter()
    with_screenshot = 0
    sample_shot = ""  # none yet: a hash no image has
    preview: list[dict[str, Any]] = []
    schema = arrow_schema(BenchmarkSnapshotSchema)
    with open_partition(lake.store, GROUP, "benchmark_snapshot", key, schema) as writer:
        sink = ValidatedSink(BenchmarkSnapshotSchema, writer)
        # where no action names its operation there is no step: the episodes are not read
        # (a 100,000-episode ADP dataset took 14 s to give no row)
        episodes = (
            iter_benchmark_episodes(lake.store, key) if names_operations(lake.store, key) else ()
        )
        for episode, events, candidates, pages in episodes:
            for row in episode_rows(episode, events, candidates, pages, settings):
                sink.add(row)
                splits[row["split"] or "unknown"] += 1
                if row["invalid_reason"]:
                    invalid[row["invalid_reason"]] += 1
                if row["image_sha"]:
                    with_screenshot += 1
                    sample_shot = sample_shot or row["image_sha"]
                if len(preview) < 5:
                    preview.append({c: row[c] for c in ("task_id", "step", "target_op")})
                    preview[-1]["choices"] = len(row["candidates"])
                    preview[-1]["answer"] = row["answer_label"] or row["invalid_reason"]
        sink.flush()
    lake.refresh_catalog(context.log)
    # the first step's screenshot, as turn one shows it, small
    shown = markdown_preview(preview) + "\n\n" + image_thumbnail(lake.store, key, sample_shot)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            **totals_across_partitions(lake, GROUP, "benchmark_snapshot"),
            "valid_steps": sink.total - sum(invalid.values()),
            "text_only_valid_steps": sink.total
            - sum(n for reason, n in invalid.items() if reason != "no_screenshot"),
            "steps_with_screenshot": with_screenshot,
            "invalid_by_reason": dict(sorted(invalid.items())),
            "steps_by_split": dict(sorted(splits.items())),
            "k": config.k,
            "seed": config.seed,
            "prompt_version": PROMPT_VERSION,
            "preview": dg.MetadataValue.md(shown),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    partitions_def=benchmark_datasets,
    deps=[benchmark_snapshot, "model_answers"],
    code_version=EVAL_RESULTS_VERSION,
    automation_condition=WITH_ITS_DATASET,
    metadata={"dagster/column_schema": column_schema(EvalResultSchema)},
)
def eval_results(
    context: dg.AssetExecutionContext, lake: LakeResource, config: EvalResultsConfig
) -> dg.MaterializeResult:
    """One row per (model, step): the model's parsed answer and its scores."""
    path = Path(config.predictions)
    files = prediction_files(path if path.is_absolute() else lake.landing / path)
    predictions, problems = read_predictions(files)
    for problem in problems:
        context.log.warning(f"{problem.file}:{problem.line}: {problem.reason}")
    key = context.partition_key
    # live models (model_answers) are scored exactly as files are; a file's model comes first
    live = live_predictions(lake.store, key)
    predictions = {**live, **predictions}
    statuses: Counter[str] = Counter()
    with open_partition(
        lake.store, GROUP, "eval_results", key, arrow_schema(EvalResultSchema)
    ) as w:
        sink = ValidatedSink(EvalResultSchema, w)
        for result in evaluate_rows(snapshot_rows(lake.store, key, EVAL_COLUMNS), predictions):
            sink.add(result)
            statuses[f"{result['model']}: {result['status']}"] += 1
        sink.flush()
    lake.refresh_catalog(context.log)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": sink.total,
            **totals_across_partitions(lake, GROUP, "eval_results"),
            "prediction_files": [str(f) for f in files],
            "live_models": sorted({model for model, _, _, _ in live}),
            "results_by_status": dict(sorted(statuses.items())),
            "unusable_prediction_lines": dg.MetadataValue.json(
                [vars(problem) for problem in problems[:20]]
            ),
        }
    )


@dg.asset(
    group_name=GROUP,
    kinds={"python", "parquet"},
    deps=[eval_results],
    code_version=BENCHMARK_VERSION,
    automation_condition=AFTER_INPUTS_CHANGE,
    metadata={"dagster/column_schema": column_schema(LeaderboardSchema)},
)
def leaderboard(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
    """One row per (model, mode, split), plus `all`: micro and macro scores over valid steps."""
    columns = list(EvalResultSchema.to_schema().columns)
    rows = leaderboard_rows(iter_table_rows(lake.store, GROUP, "eval_results", columns))
    write_partition(lake.store, GROUP, "leaderboard", "all", frame(LeaderboardSchema, rows))
    overall = [row for row in rows if row["split"] == ALL_SPLITS]
    chart = leaderboard_svg(overall, "Web benchmark: every split")
    table = markdown_table(rows)
    files = {"leaderboard.md": (table + "\n").encode(), "leaderboard.svg": chart.encode()}
    store = lake.store
    if isinstance(store, Path):
        out = Path(lake.data_dir) / GROUP
        out.mkdir(parents=True, exist_ok=True)
        for name, data in files.items():
            write_durably(out / name, data)  # kept when unchanged
        chart_at = str(out / "leaderboard.svg")
    else:  # beside an object-store lake, as data/benchmark/ is beside data/lake/
        outputs = store.beside(GROUP)
        for name, data in files.items():
            outputs.put_bytes(data, outputs.key(name))  # not uploaded when unchanged
        chart_at = outputs.url(outputs.key("leaderboard.svg"))
    lake.refresh_catalog(context.log)
    image = base64.b64encode(chart.encode()).decode()
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "leaderboard": dg.MetadataValue.md(
                f"{table}\n\n![leaderboard](data:image/svg+xml;base64,{image})"
            ),
            "chart": dg.MetadataValue.path(chart_at),
            "models": sorted({row["model"] for row in rows}),
            "modes": sorted({row["mode"] for row in rows}),
        }
    )
