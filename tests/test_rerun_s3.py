"""The demo's rerun stamps on an object-store lake: outputs known by their objects' size and
the store's content tag, so touching an object rebuilds nothing, a same-size edit rebuilds
that output, and stamps taken on another lake count for nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import polars as pl
import pytest
from conftest import DagsterLake
from s3_server import s3_server

from bigaction_assets import demo, demo_runs
from bigaction_assets.dagster_home import prepare_dagster_home
from bigaction_assets.lake_uri import LAKE_URI_ENV, parse_lake
from bigaction_assets.lake_writer import write_partition
from bigaction_assets.rerun.objects import ObjectStates
from bigaction_assets.rerun.plan import Plan
from bigaction_assets.rerun.stamps import Stamps
from bigaction_assets.s3_settings import ENDPOINT_ENV
from bigaction_assets.settings import DATA_DIR_ENV, LANDING_DIR_ENV, Paths

DATASET = "mind2web.train_demo"


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


def s3_client():
    import os

    return boto3.client("s3", endpoint_url=os.environ[ENDPOINT_ENV], region_name="us-east-1")


def touch(bucket: str, key: str) -> None:
    """What `touch` is on S3: the object copied onto itself with new metadata; the copy gets
    a new LastModified (one second later at least, S3's resolution), its bytes stay."""
    client = s3_client()
    before = client.head_object(Bucket=bucket, Key=key)["LastModified"]
    time.sleep(1.1)
    client.copy_object(
        Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key},
        MetadataDirective="REPLACE", Metadata={"touched": "yes"},
    )  # fmt: skip
    assert client.head_object(Bucket=bucket, Key=key)["LastModified"] > before


def same_size_edit(bucket: str, key: str) -> None:
    """One byte changed, the size kept."""
    client = s3_client()
    data = bytearray(client.get_object(Bucket=bucket, Key=key)["Body"].read())
    data[-5] ^= 1
    client.put_object(Bucket=bucket, Key=key, Body=bytes(data))


def test_a_stamp_on_s3_holds_through_a_touch_and_breaks_on_a_same_size_edit(
    bucket: str, tmp_path: Path
) -> None:
    lake = parse_lake(f"s3://{bucket}/units/lake")
    write_partition(lake, "g", "a", "p", pl.DataFrame({"x": [1, 2, 3]}))
    stamps = Stamps(tmp_path, store=ObjectStates(lake))
    built = stamps.store.outputs("g", "a", "p")  # type: ignore[union-attr]
    assert list(built) == ["lake/g/a/p.parquet"]
    stamps.record("a", "p", "f1", built)
    stamps.save()

    def current() -> str | None:
        return Stamps.load(tmp_path, ObjectStates(lake)).current("a", "p")

    assert current() == "f1"
    touch(bucket, "units/lake/g/a/p.parquet")
    assert current() == "f1"
    same_size_edit(bucket, "units/lake/g/a/p.parquet")
    assert current() is None
    # stamps of another lake (a local one, or another store) say nothing of this one
    assert Stamps.load(tmp_path).current("a", "p") is None
    other = parse_lake(f"s3://{bucket}/elsewhere/lake")
    assert Stamps.load(tmp_path, ObjectStates(other)).current("a", "p") is None


@pytest.fixture
def demo_on_s3(
    bucket: str, dagster_lake: DagsterLake, monkeypatch: pytest.MonkeyPatch
) -> tuple[Paths, str]:
    """The demo's settings with the lake at an s3:// URI (and one dataset landed)."""
    dagster_lake.add_bundled("mind2web", "train_demo")
    uri = f"s3://{bucket}/demo/lake"
    for name, value in {
        DATA_DIR_ENV: str(dagster_lake.data), LANDING_DIR_ENV: str(dagster_lake.landing),
        LAKE_URI_ENV: uri, "DAGSTER_HOME": str(dagster_lake.data / "dagster"),
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    paths = Paths.from_env()
    prepare_dagster_home(paths)
    return paths, uri


# the runs that work on an object-store lake today (the telemetry and the list of unread
# landing files still read the lake as local files)
JOBS = (demo.JOB_NAME, demo.FILES_JOB_NAME)


def planned(paths: Paths) -> Plan:
    graph = demo.load_graph(paths.lake.parent)
    plan, _, _ = demo.rerun_plan(paths, graph, {}, {}, force=False)
    return Plan([step for step in plan.steps if step.job in JOBS], plan.fingerprints)


def stale(plan: Plan) -> dict[tuple[str, str | None], str]:
    return {instance: step.why[instance] for step in plan.steps for instance in step.why}


def test_the_demos_reruns_on_s3_follow_the_objects_content(
    bucket: str, demo_on_s3: tuple[Paths, str]
) -> None:
    paths, uri = demo_on_s3
    graph = demo.load_graph(paths.lake.parent)
    plan, configs, stamps = demo.rerun_plan(paths, graph, {}, {}, force=False)
    assert isinstance(stamps.store, ObjectStates) and stamps.store.uri == uri
    first = Plan([step for step in plan.steps if step.job in JOBS], plan.fingerprints)
    assert ("sft_examples", DATASET) in stale(first) and ("sft_files", None) in stale(first)
    outcome = demo_runs.materialize(first, graph, configs, stamps, paths.lake.parent)
    assert outcome and all(outcome.values()), outcome
    assert not (paths.lake.parent / "lake").exists(), "the runs wrote the store, not the disk"
    assert stale(planned(paths)) == {}

    sft_key = f"demo/lake/sft/sft_examples/{DATASET}.parquet"
    touch(bucket, sft_key)
    touch(bucket, "demo/sft/openai/train.jsonl")
    assert stale(planned(paths)) == {}, "a touch is no change"

    same_size_edit(bucket, "demo/sft/openai/train.jsonl")
    assert stale(planned(paths)) == {
        ("sft_files", None): "sft/openai/train.jsonl changed since it was built"
    }
    same_size_edit(bucket, sft_key)
    assert ("sft_examples", DATASET) in stale(planned(paths))
