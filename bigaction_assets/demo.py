"""`make demo`: ingest every landing dataset through Dagster, then print what was made.

A rerun builds only what is out of date (`bigaction_assets.rerun`): it fingerprints the landing
files and compares each output's stamp with what it would be built from now. When nothing
changed it neither loads Dagster nor launches a run, and rewrites no file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets import ingest
from bigaction_assets.dagster_home import prepare_dagster_home
from bigaction_assets.demo_summary import summary
from bigaction_assets.lake import Lake, local_root
from bigaction_assets.lake_uri import LAKE_URI_ENV, parse_lake
from bigaction_assets.privacy.register import forgotten_pseudonyms
from bigaction_assets.rerun.fingerprint import file_sha256, keep_digests_in
from bigaction_assets.rerun.graph import Graph, cache_graph, cached_graph, source_hash
from bigaction_assets.rerun.inputs import dataset_roots, extra_inputs
from bigaction_assets.rerun.objects import ObjectStates
from bigaction_assets.rerun.plan import Plan, Step, plan
from bigaction_assets.rerun.stamps import Stamps
from bigaction_assets.settings import DATA_DIR_ENV, Paths
from bigaction_assets.sources import adapters

JOB_NAME = "build_dataset"
BENCHMARK_JOB = "score_dataset"  # after build_dataset, on each landing dataset (no telemetry day)
FILES_JOB_NAME = "write_sft_files"
RELEASE_JOB_NAME = "publish_release"
LEADERBOARD_JOB_NAME = "rank_models"
REWARD_JOB_NAME = "build_reward_examples"
TELEMETRY_BATCHES_JOB = "ingest_telemetry_batches"
TELEMETRY_DAY_JOB = "build_telemetry_day"
UNREAD_JOB_NAME = "list_unread_landing_files"
# Once someone asked to be forgotten, the erasure runs first whenever the requests changed: the
# `forgotten_users` asset alone (the runs after it rebuild what it rewrote and check each
# dataset; the forget job's own check of the release would fail until the release is rebuilt).
ERASURE_JOB = "forget_users"
ERASURE_ASSET = "forgotten_users"
# After the datasets, in this order (the release reads the reward sets), with what is printed.
CROSS_DATASET_JOBS = {
    UNREAD_JOB_NAME: "unread landing files",
    FILES_JOB_NAME: "sft files",
    LEADERBOARD_JOB_NAME: "leaderboard",
    REWARD_JOB_NAME: "reward examples",
    RELEASE_JOB_NAME: "release",
}
JOBS = [
    ERASURE_JOB, JOB_NAME, BENCHMARK_JOB, TELEMETRY_BATCHES_JOB, TELEMETRY_DAY_JOB,
    *CROSS_DATASET_JOBS,
]  # fmt: skip


def land_telemetry(paths: Paths) -> dict[str, Path]:
    """Land the telemetry sample (scrubbed, pseudonymized: the development key unless
    BIGACTION_PSEUDONYM_KEY is set) without the senders who asked to be forgotten; batches
    already landed with the same bytes stay as they are. Returns every landed batch by id."""
    from bigaction_assets.privacy.pseudonyms import Pseudonymizer
    from bigaction_assets.telemetry.sample import land_sample
    from bigaction_assets.telemetry_batches import batch_files

    # the register of forgotten senders is read where the lake is (on a store, in the store)
    forgotten = forgotten_pseudonyms(lake_of(paths), paths.landing)
    landed = land_sample(paths.landing, Pseudonymizer.from_env(dev=True), forgotten=forgotten)
    withheld = f", {landed['forgotten']} withheld (forgotten senders)" if forgotten else ""
    print(
        f"  telemetry sample: {landed['received']} steps in {landed['batches']} batches, "
        f"{landed['stored']} stored, {landed['opted_out']} opted out{withheld}; "
        f"scrubbed {landed['scrubbed']}"
    )
    return batch_files(paths.landing)


def lake_of(paths: Paths) -> Lake:
    """The lake the runs write: `BIGACTION_LAKE_URI`'s (an object store, say), else the data
    folder's, as `LakeResource.store` finds it."""
    uri = os.environ.get(LAKE_URI_ENV)
    if not uri:
        return paths.lake
    root = parse_lake(uri)
    return local_root(root) or root


def load_graph(data_dir: Path) -> Graph:
    """The asset graph, from the cache while no source file changed, else from Dagster."""
    key = source_hash()
    graph = cached_graph(data_dir, key)
    if graph is None:
        from bigaction_assets.demo_runs import graph_from_dagster

        graph = graph_from_dagster(JOBS)
        cache_graph(data_dir, key, graph)
    return graph


def demo_steps(
    graph: Graph, datasets: list[str], batches: list[str], erase: bool = False
) -> list[Step]:
    """The runs of a full build, in order, each with the outputs it owns; an unpartitioned
    asset of a per-dataset job is owned by the cross-dataset job that has it (the SFT files),
    else by the last run that has it (the telemetry report). With `erase` (someone asked to be
    forgotten), the erasure comes first, while the lake still says which episodes were theirs."""
    batch_outputs = [(asset, b) for b in batches for asset in graph.jobs[TELEMETRY_BATCHES_JOB]]
    steps = [Step(TELEMETRY_BATCHES_JOB, tuple(batches), batch_outputs, label="raw_telemetry")]
    if erase:
        steps.insert(0, Step(ERASURE_JOB, (), [(ERASURE_ASSET, None)], label="forgotten senders"))
    owner: dict[str, Step] = {}
    cross_dataset = {asset for job in CROSS_DATASET_JOBS for asset in graph.jobs[job]}
    for key in datasets:
        day = key.startswith("telemetry.")
        step = (
            Step(TELEMETRY_DAY_JOB, (key,))
            if day
            else Step(JOB_NAME, (key,), then=(BENCHMARK_JOB,))
        )
        for asset in (a for job in (step.job, *step.then) for a in graph.jobs[job]):
            if graph.assets[asset].partitions is not None:
                step.owns.append((asset, key))
            elif asset not in cross_dataset:  # the SFT files: once, after every dataset
                owner[asset] = step
        steps.append(step)
    for asset, step in owner.items():
        step.owns.append((asset, None))
    for job, label in CROSS_DATASET_JOBS.items():
        steps.append(Step(job, (), [(asset, None) for asset in graph.jobs[job]], label=label))
    return [step for step in steps if step.owns]


def rerun_plan(
    paths: Paths, graph: Graph, overrides: dict[str, Any], batches: dict[str, Path], force: bool
) -> tuple[Plan, dict[str, Any], Stamps]:
    """Each run's outputs that are out of date (all of them with `force`)."""
    data_dir = paths.lake.parent
    found = ingest.discover(paths.landing, adapters())
    configs = {
        name: {**(node.config or {}), **overrides.get(name, {})} if node.config else None
        for name, node in graph.assets.items()
    }
    roots: dict[tuple[str, str | None], str] = {
        ("raw_records", key): root for key, root in dataset_roots(found, paths.landing).items()
    }
    roots |= {("raw_telemetry", b): file_sha256(path) for b, path in batches.items()}
    store = data_dir / "annotate" / "store.sqlite3"
    extras = extra_inputs(paths.landing, store, os.environ, configs)
    lake = lake_of(paths)
    store = None if isinstance(lake, Path) else ObjectStates(lake)  # outputs are objects there
    stamps = Stamps(data_dir, store=store) if force else Stamps.load(data_dir, store)
    erase = bool(forgotten_pseudonyms(lake, paths.landing))
    steps = demo_steps(graph, sorted(found), sorted(batches), erase)
    return plan(graph, steps, roots, configs, extras, stamps), configs, stamps


def materialize_all(
    paths: Paths, overrides: dict[str, Any], force: bool = False, explain: bool = False
) -> dict:
    """Runs what is out of date; returns whether each run succeeded (none: all up to date)."""
    batches = land_telemetry(paths)
    graph = load_graph(paths.lake.parent)
    # a Dagster instance without its run history has not seen these outputs: build them again
    home = Path(os.environ["DAGSTER_HOME"])
    force = force or not (home / "history" / "runs.db").is_file()
    planned, configs, stamps = rerun_plan(paths, graph, overrides, batches, force)
    if planned.up_to_date:
        print(f"  up to date: {len(planned.fingerprints)} outputs, nothing to run", flush=True)
        return {}
    from bigaction_assets.demo_runs import materialize

    return materialize(planned, graph, configs, stamps, paths.lake.parent, explain)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        default="{}",
        help='run config by asset, as JSON: {"sft_examples": {"max_tokens": 4096}}',
    )
    parser.add_argument("--force", action="store_true", help="build everything again")
    parser.add_argument("--explain", action="store_true", help="say why each output is built")
    args = parser.parse_args(argv)
    paths = Paths.from_env()
    keep_digests_in(paths.lake.parent / "cache")  # a rerun stats the landing, not reads it
    home = prepare_dagster_home(paths)
    print(f"Ingesting {paths.landing} into {paths.lake} ({DATA_DIR_ENV}); Dagster home {home}")
    outcome = materialize_all(paths, orjson.loads(args.config), args.force, args.explain)
    print(summary(paths, lake_of(paths)))
    failed = [key for key, ok in outcome.items() if not ok]
    if failed:
        print(f"\n{len(failed)} dataset(s) failed: {', '.join(failed)} — see `make ui`, Runs.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
