"""The erasure of forgotten senders and the release on an object-store lake: the same objects,
byte for byte, as the files a local lake gets, their checks passing on the store, an erasure
stopped midway leaving whole objects that a rerun finishes, and the push to a Hub from the
release published beside the lake."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pyarrow.fs as pafs
import pytest
from conftest import DagsterLake, with_llm
from hub_server import FakeHub
from llm_server import ScriptedServer
from s3_server import s3_server
from test_lake_stages_s3 import SPINE, local_files, materialize, object_files
from test_privacy_erasure import TABLES

from bigaction_assets import lake_reader, lake_writer
from bigaction_assets.definitions import defs
from bigaction_assets.defs.hub_resource import HubResource
from bigaction_assets.defs.llm_resource import LLMResource
from bigaction_assets.defs.privacy.checks import FORGET_CHECKS
from bigaction_assets.defs.release.assets import release_asset
from bigaction_assets.defs.release.push import revision_asset
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.privacy import erasure, forget
from bigaction_assets.privacy.erasure import Forgotten, erase_lake
from bigaction_assets.privacy.register import table_offenders

DATASET = "mind2web.train_demo"
GONE = "f" * 32  # the pseudonym of a sender who asks to be forgotten
ERASURE = dg.AssetSelection.assets("forgotten_users") | dg.AssetSelection.checks(*FORGET_CHECKS)
TOKEN = "hf_release_token_for_the_s3_test_000"


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


def on_s3(dagster_lake: DagsterLake, uri: str) -> LakeResource:
    return LakeResource(
        landing_dir=str(dagster_lake.landing),
        data_dir=str(dagster_lake.data / "s3-side"),
        lake_uri=uri,
    )


def beside(uri: str, name: str) -> str:
    return f"{uri.removesuffix('/lake')}/{name}"


def every_object(uri: str) -> dict[str, bytes]:
    """`object_files`, hidden (temporary) keys included."""
    root = parse_lake(uri)
    selector = pafs.FileSelector(root.base, recursive=True, allow_not_found=True)
    infos = root.filesystem.get_file_info(selector)
    return {
        i.path.removeprefix(root.base + "/"): root.read_bytes(i.path)
        for i in infos
        if i.type == pafs.FileType.File
    }


def test_erase_lake_on_s3_leaves_the_objects_it_leaves_on_disk(bucket: str, tmp_path: Path) -> None:
    local, uri = tmp_path / "lake", f"s3://{bucket}/unit/lake"
    store = parse_lake(uri)
    for (group, asset, key), columns in TABLES.items():
        for root in (local, store):
            lake_writer.write_partition(root, group, asset, key, pl.DataFrame(columns))
    forgotten = Forgotten(frozenset({"a" * 32}), frozenset({f"telemetry/2025-05-14/{'c' * 32}"}))
    before = object_files(uri)
    assert before == local_files(local)

    erased = erase_lake(store, forgotten)

    assert erased == erase_lake(local, forgotten) and sum(map(len, erased.values())) == 6
    assert every_object(uri) == local_files(local) != before  # no temporary object left
    for group, asset, _ in TABLES:
        assert table_offenders(store, group, asset, forgotten) == []


def seed_sender(resource: LakeResource, episodes: list[str]) -> None:
    """A `raw_telemetry` partition tying the sender to `episodes` (what ties a sender to their
    episodes in the lake), in the lake of `resource`."""
    rows = {"user_pseudonym": [GONE] * len(episodes), "session_pseudonym": ["s"] * len(episodes),
            "episode_id": episodes}  # fmt: skip
    lake_writer.write_partition(
        resource.store, "telemetry", "raw_telemetry", "b1", pl.DataFrame(rows)
    )


@pytest.fixture
def two_lakes(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance, request: Any
) -> tuple[LakeResource, LakeResource, str]:
    """The dataset built on disk and on the store, with a sender's episodes tied to a pseudonym
    that asks to be forgotten."""
    dagster_lake.add_bundled("mind2web", "train_demo")
    uri = f"s3://{bucket}/{request.node.name[:40]}/lake"
    s3 = on_s3(dagster_lake, uri)
    ephemeral_instance.add_dynamic_partitions("datasets", [DATASET])
    for resource in (dagster_lake.resource, s3):
        materialize(resource, ephemeral_instance, SPINE, DATASET)
    ids = lake_reader.read_partition(s3.store, "standardized", "episodes", DATASET)["episode_id"]
    for resource in (dagster_lake.resource, s3):
        seed_sender(resource, sorted(ids)[:2])
    forget.record_request(dagster_lake.landing, GONE, via="cli")
    return dagster_lake.resource, s3, uri


def test_forgotten_users_on_s3_erases_what_it_erases_on_disk_and_its_checks_pass(
    two_lakes: tuple[LakeResource, LakeResource, str],
    dagster_lake: DagsterLake,
    ephemeral_instance: dg.DagsterInstance,
) -> None:
    local, s3, uri = two_lakes
    sft_before = object_files(beside(uri, "sft"))
    for resource in (local, s3):
        assert len(materialize(resource, ephemeral_instance, ERASURE, None)) == len(FORGET_CHECKS)
    assert every_object(uri) == local_files(dagster_lake.root)
    events = lake_reader.read_partition(s3.store, "standardized", "events", DATASET)
    assert events.height and not set(events["episode_id"]) & set(seed_episodes(s3))
    sft = dagster_lake.data / "sft"
    written = {p.relative_to(sft).as_posix(): p.read_bytes() for p in sft.rglob("*") if p.is_file()}
    assert object_files(beside(uri, "sft")) == written != sft_before


def seed_episodes(resource: LakeResource) -> list[str]:
    tombstones = lake_reader.read_partition(resource.store, "privacy", "forgotten_users", "all")
    return [e for row in tombstones["episode_ids"].to_list() for e in row]


def test_an_erasure_stopped_midway_leaves_whole_objects_and_a_rerun_finishes_it(
    two_lakes: tuple[LakeResource, LakeResource, str],
    dagster_lake: DagsterLake,
    ephemeral_instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    local, s3, uri = two_lakes
    with ScriptedServer() as server:  # thoughts: a table erased after raw_telemetry
        llm = LLMResource(base_url=server.base_url, model="s")
        for resource in (local, s3):
            assert dg.materialize(
                with_llm(list(defs().assets), llm), partition_key=DATASET,  # type: ignore[arg-type]
                instance=ephemeral_instance, resources={"lake": resource},
                selection=dg.AssetSelection.assets("thoughts"),
            ).success  # fmt: skip
    materialize(local, ephemeral_instance, ERASURE, None)
    erased = local_files(dagster_lake.root)
    before = every_object(uri)
    whole = erasure.erase_partition

    def stop_at_thoughts(store: Any, group: str, asset: str, *rest: Any) -> int:
        # after raw_telemetry, the table that said which episodes were theirs, is erased
        if asset == "thoughts":
            raise OSError("the worker died")
        return whole(store, group, asset, *rest)

    monkeypatch.setattr(erasure, "erase_partition", stop_at_thoughts)
    result = dg.materialize(
        list(defs().assets), instance=ephemeral_instance,  # type: ignore[arg-type]
        resources={"lake": s3}, selection=dg.AssetSelection.assets("forgotten_users"),
        raise_on_error=False,
    )  # fmt: skip
    assert not result.success
    midway = every_object(uri)
    assert set(midway) == set(before) | {"privacy/forgotten_users/all.parquet"}
    assert all(data in (before.get(name), erased.get(name)) for name, data in midway.items())
    raw, thoughts = "telemetry/raw_telemetry/b1.parquet", f"thoughts/thoughts/{DATASET}.parquet"
    assert midway[raw] == erased[raw] != before[raw]
    assert midway[thoughts] == before[thoughts] != erased[thoughts]

    monkeypatch.setattr(erasure, "erase_partition", whole)
    materialize(s3, ephemeral_instance, ERASURE, None)  # the rerun, its checks passing
    assert every_object(uri) == erased


RELEASE = dg.AssetKey("hub_release"), dg.AssetKey("hub_revision")


def release(resource: LakeResource, instance: dg.DagsterInstance, hub: HubResource):
    """`publish_release`: the folder (with its checks), then the push."""
    code = defs()
    assets = [a for a in code.assets if not (isinstance(a, dg.AssetsDefinition) and
                                             set(RELEASE) & a.keys)]  # fmt: skip
    result = dg.materialize(
        [*assets, *(code.asset_checks or []), release_asset(hub), revision_asset(hub)],  # type: ignore[list-item]
        instance=instance, resources={"lake": resource},
        selection=dg.AssetSelection.assets(*RELEASE),
    )  # fmt: skip
    evaluations = result.get_asset_check_evaluations()
    assert {e.check_name for e in evaluations} >= {"release_matches_manifest",
                                                   "forgotten_users_absent"}  # fmt: skip
    assert all(e.passed for e in evaluations), [e.description for e in evaluations]
    return result


def test_the_release_on_s3_is_the_folder_on_disk_and_is_pushed_from_there(
    bucket: str,
    dagster_lake: DagsterLake,
    ephemeral_instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dagster_lake.add_bundled("mind2web", "train_demo", images=True)
    uri = f"s3://{bucket}/release/lake"
    s3 = on_s3(dagster_lake, uri)
    ephemeral_instance.add_dynamic_partitions("datasets", [DATASET])
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hubs = FakeHub(TOKEN), FakeHub(TOKEN)
    try:
        for resource, server in zip((dagster_lake.resource, s3), hubs, strict=True):
            materialize(resource, ephemeral_instance, SPINE, DATASET)
            hub = HubResource(repo_id="bigaction/agents", token=dg.EnvVar("HF_TOKEN"),
                              endpoint=server.url)  # fmt: skip
            release(resource, ephemeral_instance, hub)
        folder = dagster_lake.data / "release"
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
                 if p.is_file()}  # fmt: skip
        assert "release_manifest.json" in files and any(n.startswith("data/images/") for n in files)
        assert every_object(beside(uri, "release")) == files
        assert not (dagster_lake.data / "s3-side" / "release").exists()
        pushed = [server.repos["bigaction/agents"].files("main") for server in hubs]
        assert pushed[0] == pushed[1] and {n: pushed[1][n] for n in files} == files
    finally:
        for server in hubs:
            server.stop()
