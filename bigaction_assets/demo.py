"""`make demo`: ingest every landing dataset through Dagster, then print what was made."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import dagster as dg
import duckdb

from bigaction_assets import ingest
from bigaction_assets.defs.resources import LLM_MODEL_ENV
from bigaction_assets.settings import DATA_DIR_ENV, PROJECT_ROOT, Paths
from bigaction_assets.sources import adapters

JOB_NAME = "build_dataset"
FILES_JOB_NAME = "write_sft_files"
RELEASE_JOB_NAME = "publish_release"
LEADERBOARD_JOB_NAME = "rank_models"
REWARD_JOB_NAME = "build_reward_examples"
PARTITIONS = "datasets"
# Runs are recorded in the instance for the UI; the terminal gets warnings and the summary.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def prepare_dagster_home(paths: Paths) -> Path:
    """Use $DAGSTER_HOME, or `<data>/dagster`, holding the project's dagster.yaml."""
    home = Path(os.environ.get("DAGSTER_HOME") or paths.lake.parent / "dagster")
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def materialize_all(paths: Paths) -> dict[str, bool]:
    """Registers every landing dataset as a partition and runs the ingest job on each."""
    from bigaction_assets.definitions import defs  # after DAGSTER_HOME is set

    instance = dg.DagsterInstance.get()
    definitions = defs()
    land_telemetry(paths, definitions, instance)
    keys = sorted(ingest.discover(paths.landing, adapters()))
    known = set(instance.get_dynamic_partitions(PARTITIONS))
    instance.add_dynamic_partitions(PARTITIONS, [k for k in keys if k not in known])
    job = definitions.resolve_job_def(JOB_NAME)
    outcome = {}
    for key in keys:
        # telemetry days go through the day job: the spine's stages plus the daily report
        day_job = key.startswith("telemetry.") and definitions.resolve_job_def(TELEMETRY_DAY_JOB)
        result = (day_job or job).execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False, run_config=QUIET
        )
        outcome[key] = result.success
        print(f"  {'ok    ' if result.success else 'FAILED'} {key}", flush=True)
    files = definitions.resolve_job_def(FILES_JOB_NAME).execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET
    )
    outcome["sft files"] = files.success
    print(f"  {'ok    ' if files.success else 'FAILED'} sft files", flush=True)
    # Benchmark: every dataset's snapshot and scores were built above; rank the models.
    ranked = definitions.resolve_job_def(LEADERBOARD_JOB_NAME).execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET
    )
    outcome["leaderboard"] = ranked.success
    print(f"  {'ok    ' if ranked.success else 'FAILED'} leaderboard", flush=True)
    # Reward (#7): items into the annotation app's store, its labels, and the reward sets
    # (from the bundled annotated ProactiveBench data until people label in `make annotate`).
    reward = definitions.resolve_job_def(REWARD_JOB_NAME).execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET
    )
    outcome["reward examples"] = reward.success
    print(f"  {'ok    ' if reward.success else 'FAILED'} reward examples", flush=True)
    # The release stays a local folder unless BIGACTION_HUB_REPO and HF_TOKEN are set.
    release = definitions.resolve_job_def(RELEASE_JOB_NAME).execute_in_process(
        instance=instance, raise_on_error=False, run_config=QUIET
    )
    outcome["release"] = release.success
    print(f"  {'ok    ' if release.success else 'FAILED'} release", flush=True)
    return outcome


# --- telemetry (#6): the bundled client batches through the collector's intake ---------------
TELEMETRY_BATCHES_JOB = "ingest_telemetry_batches"
TELEMETRY_DAY_JOB = "build_telemetry_day"


def land_telemetry(paths: Paths, definitions: dg.Definitions, instance: dg.DagsterInstance) -> None:
    """Land the telemetry sample (scrubbed, pseudonymized: the development key unless
    BIGACTION_PSEUDONYM_KEY is set) and ingest its batches into raw_telemetry in one run."""
    from bigaction_assets.privacy.pseudonyms import Pseudonymizer
    from bigaction_assets.telemetry.landing import batch_files
    from bigaction_assets.telemetry.sample import land_sample

    landed = land_sample(paths.landing, Pseudonymizer.from_env(dev=True))
    print(
        f"  telemetry sample: {landed['received']} steps in {landed['batches']} batches, "
        f"{landed['stored']} stored, {landed['opted_out']} opted out; scrubbed {landed['scrubbed']}"
    )
    batches = sorted(batch_files(paths.landing))
    known = set(instance.get_dynamic_partitions("telemetry_batches"))
    instance.add_dynamic_partitions("telemetry_batches", [b for b in batches if b not in known])
    result = definitions.resolve_job_def(TELEMETRY_BATCHES_JOB).execute_in_process(
        instance=instance,
        raise_on_error=False,
        run_config=QUIET,
        tags={
            "dagster/asset_partition_range_start": batches[0],
            "dagster/asset_partition_range_end": batches[-1],
        },
    )
    print(f"  {'ok    ' if result.success else 'FAILED'} raw_telemetry", flush=True)


def thoughts_line(con: duckdb.DuckDBPyConnection, views: list[str]) -> str:
    """What the thoughts stage did: how many agent actions lack a recorded thought, and how
    many thoughts a model wrote (none without one: say how to set one up)."""
    missing = con.execute(
        """select count(*) from events where kind in ('api_action', 'code_action',
        'message_action') and source = 'agent' and coalesce(trim(description), '') = ''"""
    ).fetchone()[0]
    generated = 0
    if "thoughts" in views:
        generated = con.execute(
            "select count(*) from thoughts where status = 'generated'"
        ).fetchone()[0]
    if os.environ.get(LLM_MODEL_ENV):
        return f"Thoughts: {generated} generated for {missing} actions without a recorded one."
    return (
        f"Thoughts: {missing} actions have no recorded thought; no model configured, so none "
        f"was generated (set {LLM_MODEL_ENV} and BIGACTION_LLM_BASE_URL, or run `make llm`: "
        "docs/thoughts.md)."
    )


def summary(paths: Paths) -> str:
    """Rows per table, rejects by reason, and where to look next."""
    lines = ["", "Rows per table:"]
    with duckdb.connect(str(paths.catalog), read_only=True) as con:
        views = [
            r[0]
            for r in con.execute(
                "select view_name from duckdb_views() where not internal order by 1"
            ).fetchall()
        ]
        for view in views:
            count = con.execute(f'select count(*) from "{view}"').fetchone()[0]
            lines.append(f"  {view:<16} {count:>8}")
        lines.append("Rejects by reason:")
        if "rejects" in views:
            rows = con.execute(
                "select dataset, reason, count(*) from rejects group by all order by 1, 2"
            ).fetchall()
            lines += [f"  {dataset:<32} {reason:<18} {n:>5}" for dataset, reason, n in rows]
        if "rejects" not in views or not rows:
            lines.append("  none")
        lines.append(thoughts_line(con, views))
    sft = paths.lake.parent / "sft"
    board = paths.lake.parent / "benchmark" / "leaderboard.md"
    if board.exists():
        lines += [
            "",
            "Benchmark leaderboard (bundled demo predictions):",
            board.read_text().rstrip(),
        ]
    lines += [
        "",
        f"Lake (Parquet):   {paths.lake}",
        f"Catalog (DuckDB): {paths.catalog}",
        f"SFT files:        {sft}/<openai|sharegpt|openhands>/<split>.jsonl",
        f"Release (Hub):    {paths.lake.parent / 'release'}  (README.md, data/<config>/*.parquet)",
        f"Benchmark:        {board.parent}  (leaderboard.md, leaderboard.svg; tables "
        "benchmark_snapshot, eval_results, leaderboard)",
        f"Reward sets:      {paths.lake.parent / 'reward' / 'llama_factory'}  (judge_*.jsonl, "
        "preference_*.jsonl, dataset_info.json)",
        "",
        "Next:",
        "  make ui                       # the Dagster UI on this data, http://127.0.0.1:3000",
        f'  .venv/bin/duckdb {paths.catalog} "select source, count(*) from episodes group by 1"',
        "  make sql Q=sql/rejects_by_reason.sql   # the queries in sql/",
        "  make annotate                 # the annotation app, http://127.0.0.1:8800 "
        "(accounts: see docs/annotation.md)",
    ]
    return "\n".join(lines)


def main() -> int:
    paths = Paths.from_env()
    home = prepare_dagster_home(paths)
    print(f"Ingesting {paths.landing} into {paths.lake} ({DATA_DIR_ENV}); Dagster home {home}")
    outcome = materialize_all(paths)
    print(summary(paths))
    failed = [key for key, ok in outcome.items() if not ok]
    if failed:
        print(f"\n{len(failed)} dataset(s) failed: {', '.join(failed)} — see `make ui`, Runs.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
