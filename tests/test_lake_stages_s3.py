"""The stages converted to an object-store lake (a dataset's build: raw_records, the standardized
tables, thoughts, sft_examples, sft_files; its scoring: benchmark_snapshot, model_answers,
eval_results; the leaderboard; the reward sets): the same objects, byte for byte, as the files
a local lake gets, and a clear refusal from the stages that still read the lake as files."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow.fs as pafs
import pytest
from conftest import DagsterLake, with_llm
from llm_server import ScriptedServer
from s3_server import s3_server

from bigaction_assets import lake_reader, lake_sql
from bigaction_assets.definitions import defs
from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.defs.resources import LakeResource, NotOnObjectStore
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.sources.proactive import ADAPTER

SPINE = dg.AssetSelection.assets("raw_records", "thoughts", "sft_examples", "sft_files") | (
    dg.AssetSelection.groups("standardized")
)  # with their asset checks, which read the lake as the assets do
LEADERBOARD = dg.AssetSelection.assets("leaderboard")
REPO_LANDING = Path(__file__).resolve().parents[1] / "landing"
DATASETS = {"adp.synatra": ("adp", "synatra"), "mind2web.train_demo": ("mind2web", "train_demo")}


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


def build(resource: LakeResource, instance: dg.DagsterInstance, partition: str) -> None:
    if not instance.has_dynamic_partition("datasets", partition):
        instance.add_dynamic_partitions("datasets", [partition])
    assert len(materialize(resource, instance, SPINE, partition)) >= 10  # checks that ran


def materialize(
    resource: LakeResource,
    instance: dg.DagsterInstance,
    selection: dg.AssetSelection,
    partition: str | None,
) -> list[str]:
    """The selection's assets and their checks; every check must pass."""
    code = defs()
    result = dg.materialize(
        [*code.assets, *(code.asset_checks or [])],  # type: ignore[list-item]
        partition_key=partition,
        instance=instance,
        resources={"lake": resource},
        selection=selection,
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert all(e.passed for e in evaluations), [
        (e.check_name, e.description) for e in evaluations if not e.passed
    ]
    return [e.check_name for e in evaluations]


def local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.parquet")}


def object_files(uri: str) -> dict[str, bytes]:
    root = parse_lake(uri)
    selector = pafs.FileSelector(root.base, recursive=True)
    return {
        info.path.removeprefix(root.base + "/"): root.read_bytes(info.path)
        for info in root.filesystem.get_file_info(selector)
        if info.type == pafs.FileType.File
    }


def test_a_datasets_stages_write_the_same_objects_to_s3_as_files_to_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    for adapter, dataset in DATASETS.values():
        dagster_lake.add_bundled(adapter, dataset)
    uri = f"s3://{bucket}/spine/lake"
    on_s3 = LakeResource(
        landing_dir=str(dagster_lake.landing),
        data_dir=str(dagster_lake.data / "s3-side"),
        lake_uri=uri,
    )
    for partition in DATASETS:
        build(dagster_lake.resource, ephemeral_instance, partition)
        build(on_s3, ephemeral_instance, partition)
    local = local_files(dagster_lake.root)
    assert {
        "raw/raw_records/adp.synatra.parquet",
        "standardized/episodes/adp.synatra.parquet",
        "thoughts/thoughts/adp.synatra.parquet",
        "sft/sft_examples/mind2web.train_demo.parquet",
    } <= set(local)
    assert object_files(uri) == local  # nothing more (no staged or temporary object), no less
    # the SFT files, beside the lake: the bytes `make demo` writes under data/sft
    sft = dagster_lake.data / "sft"
    written = {p.relative_to(sft).as_posix(): p.read_bytes() for p in sft.rglob("*") if p.is_file()}
    assert {"openai/train.jsonl", "sharegpt/dataset_info.json"} <= set(written)
    assert object_files(f"s3://{bucket}/spine/sft") == written
    assert not (dagster_lake.data / "s3-side" / "sft").exists()
    assert not (dagster_lake.data / "s3-side" / "lake").exists(), "nothing went to local disk"
    # the catalog the steps refreshed reads the objects
    with duckdb.connect(str(dagster_lake.data / "s3-side" / "bigaction.duckdb")) as con:
        lake_sql.register(con, on_s3.store)
        count = con.execute("select count(*) from episodes").fetchone()
    with duckdb.connect(str(dagster_lake.catalog)) as con:
        assert count == con.execute("select count(*) from episodes").fetchone()


def test_a_stage_that_reads_the_lake_as_files_refuses_an_object_store(bucket: str) -> None:
    resource = LakeResource(landing_dir="/l", data_dir="/d", lake_uri=f"s3://{bucket}/x")
    assert not resource.is_local
    with pytest.raises(NotOnObjectStore, match=f"the lake is s3://{bucket}/x"):
        _ = resource.root
    local = LakeResource(landing_dir="/l", data_dir="/d")
    assert local.is_local and local.root == local.store == Path("/d/lake")


def test_generated_thoughts_and_their_examples_on_s3_are_the_ones_on_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    dagster_lake.add_bundled("mind2web", "train_demo")
    uri = f"s3://{bucket}/thoughts/lake"
    on_s3 = LakeResource(
        landing_dir=str(dagster_lake.landing),
        data_dir=str(dagster_lake.data / "s3-side"),
        lake_uri=uri,
    )
    partition = "mind2web.train_demo"
    with ScriptedServer() as server:
        for resource in (dagster_lake.resource, on_s3):
            build(resource, ephemeral_instance, partition)  # no model yet: empty thoughts
            result = dg.materialize(
                with_llm(list(defs().assets), LLMResource(base_url=server.base_url, model="s")),  # type: ignore[arg-type]
                partition_key=partition,
                instance=ephemeral_instance,
                resources={"lake": resource},
                selection=dg.AssetSelection.assets("thoughts", "sft_examples").without_checks(),
            )
            assert result.success
        assert len(server.requests) == 2 * 14  # each lake beside its own call cache
    local = local_files(dagster_lake.root)
    remote = object_files(uri)
    for table in ("thoughts/thoughts", "sft/sft_examples"):
        name = f"{table}/{partition}.parquet"
        assert remote[name] == local[name]
    rows = lake_reader.read_partition(on_s3.store, "thoughts", "thoughts", partition)
    assert rows.height == 14 and set(rows["status"]) == {"generated"}
    sources = lake_reader.read_partition(on_s3.store, "sft", "sft_examples", partition)[
        "thought_source"
    ]
    assert "generated" in set(sources)


SCORING = dg.AssetSelection.assets("benchmark_snapshot", "model_answers", "eval_results")


def test_the_benchmark_and_its_leaderboard_on_s3_are_the_ones_on_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    dagster_lake.add_bundled("mind2web", "train_demo")
    shutil.copytree(REPO_LANDING / "predictions", dagster_lake.landing / "predictions")
    partition, uri = "mind2web.train_demo", f"s3://{bucket}/benchmark/lake"
    ephemeral_instance.add_dynamic_partitions("benchmark_datasets", [partition])
    on_s3 = LakeResource(
        landing_dir=str(dagster_lake.landing),
        data_dir=str(dagster_lake.data / "s3-side"),
        lake_uri=uri,
    )
    for resource in (dagster_lake.resource, on_s3):
        build(resource, ephemeral_instance, partition)
        materialize(resource, ephemeral_instance, SCORING, partition)
        materialize(resource, ephemeral_instance, LEADERBOARD, None)
    local, remote = local_files(dagster_lake.root), object_files(uri)
    assert {f"benchmark/eval_results/{partition}.parquet", "benchmark/leaderboard/all.parquet"} <= (
        set(local)
    )
    assert remote == local
    board = dagster_lake.data / "benchmark"
    shown = {p.name: p.read_bytes() for p in board.iterdir()}
    assert set(shown) == {"leaderboard.md", "leaderboard.svg"}
    assert object_files(f"s3://{bucket}/benchmark/benchmark") == shown
    assert b"demo-careful" in shown["leaderboard.md"]


REWARD = dg.AssetSelection.assets("annotation_items", "annotations", "reward_examples")


def test_the_reward_sets_on_s3_are_the_ones_on_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    shutil.copytree(REPO_LANDING / "proactive", dagster_lake.landing / "proactive")
    dagster_lake.add_bundled("mind2web", "train_demo")
    datasets = [f"proactive.{name}" for name in ADAPTER.dataset_files(REPO_LANDING / "proactive")]
    uri = f"s3://{bucket}/reward/lake"
    on_s3 = LakeResource(
        landing_dir=str(dagster_lake.landing),
        data_dir=str(dagster_lake.data / "s3-side"),
        lake_uri=uri,
    )
    for resource in (dagster_lake.resource, on_s3):
        for partition in [*datasets, "mind2web.train_demo"]:
            build(resource, ephemeral_instance, partition)
        materialize(resource, ephemeral_instance, REWARD, None)
    local, remote = local_files(dagster_lake.root), object_files(uri)
    assert {"reward/annotation_items/all.parquet", "reward/reward_examples/all.parquet"} <= set(
        local
    )
    assert remote == local
    sets = dagster_lake.data / "reward" / "llama_factory"
    written = {p.name: p.read_bytes() for p in sets.iterdir()}
    assert "dataset_info.json" in written and len(written) > 1
    assert object_files(f"s3://{bucket}/reward/reward/llama_factory") == written
