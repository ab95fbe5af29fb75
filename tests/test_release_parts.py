"""A release rebuilt where its inputs changed: the parts of unchanged datasets are kept from
the release before (their lake files not read), and the folder is the same bytes as a release
built anew from the same lake."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_release import TEST_SPLIT, built, pipeline, release  # noqa: F401 - fixtures

from bigaction_assets.release import build
from bigaction_assets.release.parts import parts_file
from tests.conftest import DagsterLake

KEPT = ["adp.synatra", "mind2web.train_demo"]


@pytest.fixture
def copy(built, tmp_path) -> DagsterLake:  # noqa: F811 - the fixture of test_release
    """The built lake, landing and data, copied for a test to change."""
    target, _ = built
    mine = DagsterLake(landing=tmp_path / "landing", data=tmp_path / "data")
    shutil.copytree(target.landing, mine.landing)
    shutil.copytree(target.data, mine.data, ignore=shutil.ignore_patterns("release", "cache"))
    return mine


def reads(monkeypatch) -> list[tuple[str, str, str]]:
    """The lake tables the release's builders read, as (group, asset, partition)."""
    seen: list[tuple[str, str, str]] = []
    original = build.iter_row_groups

    def spy(lake, group, asset, partition, columns=None):
        seen.append((group, asset, partition))
        return original(lake, group, asset, partition, columns)

    monkeypatch.setattr(build, "iter_row_groups", spy)
    monkeypatch.setattr("bigaction_assets.release.images.iter_row_groups", spy)
    return seen


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def drop_one_example(target: DagsterLake, dataset: str) -> None:
    path = target.table("sft", "sft_examples", dataset)
    table = pq.read_table(path)
    pq.write_table(table.slice(1), path, compression="zstd")


def fresh(pipeline, target, instance) -> dict[str, bytes]:  # noqa: F811
    """The release of the lake as it is, built with nothing to keep."""
    parts_file(target.data / "release").unlink()
    assert release(pipeline, target, instance, exclude_datasets=[TEST_SPLIT]).success
    return files(target.data / "release")


def test_an_edited_dataset_rebuilds_its_own_parts_alone(pipeline, built, copy, monkeypatch):  # noqa: F811
    _, instance = built
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    drop_one_example(copy, "adp.synatra")
    seen = reads(monkeypatch)
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    # only synatra's SFT examples were read again; its episodes, events, Mind2Web's all kept
    assert {table for table in seen if table[0] != "reward"} == {
        ("sft", "sft_examples", "adp.synatra")
    }
    incremental = files(copy.data / "release")
    rows = json.loads(incremental["release_manifest.json"])["rows"]
    assert sum(rows["sft_openai"].values()) == sum(
        pq.read_metadata(copy.table("sft", "sft_examples", d)).num_rows for d in KEPT
    )
    monkeypatch.undo()
    assert incremental == fresh(pipeline, copy, instance)


def test_a_kept_shard_changed_on_disk_is_built_again(pipeline, built, copy, monkeypatch):  # noqa: F811
    _, instance = built
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    before = files(copy.data / "release")
    [shard, *_] = sorted((copy.data / "release" / "data" / "events" / "adp.synatra").iterdir())
    shard.write_bytes(shard.read_bytes()[:-1] + b"!")  # an edit the manifest's digest tells
    seen = reads(monkeypatch)
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    assert ("standardized", "events", "adp.synatra") in seen
    assert ("standardized", "events", "mind2web.train_demo") not in seen
    assert files(copy.data / "release") == before


def test_the_record_of_another_release_keeps_nothing(pipeline, built, copy, monkeypatch):  # noqa: F811
    """A build stopped after swapping the folder in leaves the record of the release before:
    it names another release, and is not used."""
    _, instance = built
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    record = parts_file(copy.data / "release")
    saved = json.loads(record.read_text())
    record.write_text(json.dumps({**saved, "release": "0" * 64}))
    seen = reads(monkeypatch)
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    assert {("sft", "sft_examples", d) for d in KEPT} <= set(seen)


def test_a_dataset_added_is_read_alone(pipeline, built, copy, monkeypatch):  # noqa: F811
    _, instance = built
    only = release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT, "mind2web.train_demo"])
    assert only.success
    seen = reads(monkeypatch)
    assert release(pipeline, copy, instance, exclude_datasets=[TEST_SPLIT]).success
    assert {partition for _, _, partition in seen if partition != "all"} == {"mind2web.train_demo"}
