"""The landing inventory, the raw step's staged standardized tables and the telemetry stage on
an object-store lake (moto's S3 server on 127.0.0.1): the same objects, byte for byte, as the
files a local lake gets, their checks passing there, and nothing half-made ever taken."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import polars as pl
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from conftest import DagsterLake
from s3_server import s3_server

from bigaction_assets import lake, lake_reader, lake_writer, staging
from bigaction_assets.definitions import defs
from bigaction_assets.defs.landing import assets as landing_assets
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.standardized.assets import GROUP, STANDARDIZE_VERSION, TABLES
from bigaction_assets.lake_uri import parse_lake
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.privacy.forget import record_request
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.privacy.withhold import WITHHELD
from bigaction_assets.staging_area import ObjectStaging
from bigaction_assets.telemetry.sample import land_sample
from bigaction_assets.telemetry_batches import batch_files

KEY = "mind2web.train_demo"
RAW = dg.AssetSelection.assets("raw_records")
STANDARDIZED = dg.AssetSelection.groups("standardized")
UNREAD = dg.AssetSelection.assets("unread_landing_files")
TELEMETRY = dg.AssetSelection.assets("raw_telemetry", "telemetry_rejects")
REPORT = dg.AssetSelection.assets("telemetry_report")
DAY = "telemetry.2025-05-14"


@pytest.fixture(scope="module")
def bucket() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, s3_server(patch) as name:
        yield name


def on_s3(target: DagsterLake, uri: str) -> LakeResource:
    """The same landing as `target`, its lake at `uri` (its catalog in a folder of its own)."""
    data = target.data / "s3-side"
    return LakeResource(landing_dir=str(target.landing), data_dir=str(data), lake_uri=uri)


def run(
    resource: LakeResource,
    instance: dg.DagsterInstance,
    selection: dg.AssetSelection,
    partition: str | None = None,
    tags: dict[str, str] | None = None,
) -> dg.ExecuteInProcessResult:
    code = defs()
    return dg.materialize(
        [*code.assets, *(code.asset_checks or [])],  # type: ignore[list-item]
        partition_key=partition,
        instance=instance,
        resources={"lake": resource},
        selection=selection,
        tags=tags,
        raise_on_error=False,
    )


def checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {
        f"{e.asset_key.to_user_string()}:{e.check_name}": e.passed
        for e in result.get_asset_check_evaluations()
    }


def local_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.parquet")}


def object_files(uri: str) -> dict[str, bytes]:
    """Every object under the root, hidden ones (staged, temporary) included."""
    root = parse_lake(uri)
    selector = pafs.FileSelector(root.base, recursive=True, allow_not_found=True)
    return {
        info.path.removeprefix(root.base + "/"): root.read_bytes(info.path)
        for info in root.filesystem.get_file_info(selector)
        if info.type == pafs.FileType.File
    }


def hidden(files: dict[str, bytes]) -> list[str]:
    return sorted(name for name in files if Path(name).name.startswith("."))


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict[str, Any]]:
    return {
        e.asset_key.to_user_string(): {k: v.value for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    }


# --- the landing inventory ------------------------------------------------------------------


class _Clock:
    """`datetime` with a `now` the test sets: `first_seen` is when a file was first listed."""

    at = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

    @classmethod
    def now(cls, tz: dt.tzinfo | None = None) -> dt.datetime:
        return cls.at


def test_unread_landing_files_on_s3_are_the_ones_on_disk_and_keep_first_seen(
    bucket: str,
    dagster_lake: DagsterLake,
    ephemeral_instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(landing_assets, "datetime", _Clock)
    dagster_lake.add_bundled("mind2web", "train_demo")
    dagster_lake.write_landing("nobody/notes.txt", "no adapter reads this")
    uri = f"s3://{bucket}/landing/lake"
    remote = on_s3(dagster_lake, uri)
    name = "landing/unread_landing_files/all.parquet"
    for resource in (dagster_lake.resource, remote):
        result = run(resource, ephemeral_instance, UNREAD)
        assert result.success
        # the check warns the same way on both: a landed file is not read
        assert checks(result) == {"unread_landing_files:landing_files_all_read": False}
    assert object_files(uri) == local_files(dagster_lake.root)
    assert set(object_files(uri)) == {name}

    # later, a second stray file: the first keeps the time it was first listed, read back
    # from the store (else the table would change with every run)
    _Clock.at = dt.datetime(2026, 2, 3, 4, 5, 6, tzinfo=dt.UTC)
    dagster_lake.write_landing("mind2web/train_demo.csv", "an ending mind2web does not read")
    for resource in (dagster_lake.resource, remote):
        assert run(resource, ephemeral_instance, UNREAD).success
    assert object_files(uri) == local_files(dagster_lake.root)
    rows = lake_reader.read_partition(remote.store, "landing", "unread_landing_files", "all")
    first_seen = dict(zip(rows["path"], rows["first_seen"], strict=True))
    assert first_seen == {
        "mind2web/train_demo.csv": "2026-02-03T04:05:06+00:00",
        "nobody/notes.txt": "2026-01-02T03:04:05+00:00",
    }

    # every landed file read again: the check passes on the store
    (dagster_lake.landing / "nobody" / "notes.txt").unlink()
    (dagster_lake.landing / "mind2web" / "train_demo.csv").unlink()
    result = run(remote, ephemeral_instance, UNREAD)
    assert checks(result) == {"unread_landing_files:landing_files_all_read": True}
    assert (
        lake_reader.read_partition(remote.store, "landing", "unread_landing_files", "all").height
        == 0
    )
    assert hidden(object_files(uri)) == []  # no temporary object left behind


# --- the raw step's staged tables -------------------------------------------------------------


def staged_sides(
    target: DagsterLake, instance: dg.DagsterInstance, bucket: str, prefix: str
) -> tuple[LakeResource, str]:
    target.add_bundled("mind2web", "train_demo")
    instance.add_dynamic_partitions("datasets", [KEY])
    uri = f"s3://{bucket}/{prefix}/lake"
    return on_s3(target, uri), uri


def test_tables_staged_on_s3_are_taken_byte_for_byte_as_on_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    remote, uri = staged_sides(dagster_lake, ephemeral_instance, bucket, "staged")
    for resource in (dagster_lake.resource, remote):
        assert run(resource, ephemeral_instance, RAW, KEY).success
    # the raw step standardized in its own pass: every table staged, hidden, with its manifest,
    # but the pages, which are raw_pages
    staged = hidden(object_files(uri))
    assert len(staged) == len(TABLES)
    assert f"raw/raw_records/.{KEY}.staged.json" in staged
    assert not lake.partition_exists(remote.store, GROUP, "episodes", KEY)  # not yet visible
    taken = {}
    for resource in (dagster_lake.resource, remote):
        result = run(resource, ephemeral_instance, STANDARDIZED, KEY)
        assert result.success and all(checks(result).values()), checks(result)
        taken[resource.is_local] = metadata(result)
    assert object_files(uri) == local_files(dagster_lake.root)  # and nothing staged is left
    objects = object_files(uri)  # the pages: raw_pages as it is, copied in the store
    assert (
        objects[f"standardized/dom_snapshots/{KEY}.parquet"]
        == objects[f"raw/raw_pages/{KEY}.parquet"]
    )
    assert taken[True] == taken[False]
    assert taken[False]["episodes"]["dagster/row_count"] > 0
    # standardized again, from the raw table now that nothing is staged: the same objects
    before = object_files(uri)
    again = run(remote, ephemeral_instance, STANDARDIZED, KEY)
    assert again.success and metadata(again) == taken[False]
    assert object_files(uri) == before


def test_a_raw_partition_rewritten_on_s3_makes_the_staged_tables_stale(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    """An erasure (or any rewrite) of the raw object in the same second as the pass: its
    footer tells it from the one the manifest vouched for."""
    remote, uri = staged_sides(dagster_lake, ephemeral_instance, bucket, "stale")
    assert run(remote, ephemeral_instance, RAW, KEY).success
    table = lake_reader.read_arrow(remote.store, "raw", "raw_records", KEY)
    with lake_writer.open_partition(
        remote.store, "raw", "raw_records", KEY, table.schema
    ) as writer:
        writer.write(table.slice(1))
    result = run(remote, ephemeral_instance, STANDARDIZED, KEY)
    assert result.success
    assert metadata(result)["episodes"]["dagster/row_count"] == table.num_rows - 1
    assert hidden(object_files(uri)) == []


def test_a_pass_cut_before_its_manifest_is_never_taken_on_s3(
    bucket: str,
    dagster_lake: DagsterLake,
    ephemeral_instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The staged objects are uploaded, then the store goes away before the manifest: the
    raw step fails, and the standardize step works from the raw table, as on disk."""
    remote, uri = staged_sides(dagster_lake, ephemeral_instance, bucket, "cut")

    def store_away(self: ObjectStaging, key: str, pass_id: str, data: bytes) -> None:
        raise OSError("the store went away")

    with monkeypatch.context() as patch:
        patch.setattr(ObjectStaging, "write_manifest", store_away)
        assert not run(remote, ephemeral_instance, RAW, KEY).success
    assert len(hidden(object_files(uri))) == len(TABLES) - 1  # staged, vouched for by nothing
    for resource in (dagster_lake.resource, remote):
        if resource.is_local:
            assert run(resource, ephemeral_instance, RAW, KEY).success
        assert run(resource, ephemeral_instance, STANDARDIZED, KEY).success
    assert object_files(uri) == local_files(dagster_lake.root)


def test_a_staged_object_gone_before_its_hand_over_falls_back_to_the_raw_table(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    """A new pass of the raw step discarded what the manifest names: nothing is half taken."""
    remote, uri = staged_sides(dagster_lake, ephemeral_instance, bucket, "gone")
    assert run(remote, ephemeral_instance, RAW, KEY).success
    store = remote.store
    assert isinstance(store, LakeRoot)
    last = next(n for n in hidden(object_files(uri)) if n.startswith(f"{GROUP}/rejects/"))
    store.delete(store.key(last))
    manifest = staging.take(store, GROUP, KEY, list(TABLES), STANDARDIZE_VERSION)
    assert manifest is None
    assert hidden(object_files(uri)) == []
    assert run(remote, ephemeral_instance, STANDARDIZED, KEY).success
    assert run(dagster_lake.resource, ephemeral_instance, RAW | STANDARDIZED, KEY).success
    assert object_files(uri) == local_files(dagster_lake.root)


def test_discarding_a_partitions_staged_objects_spares_a_longer_key(bucket: str) -> None:
    root = parse_lake(f"s3://{bucket}/discard/lake")
    area = ObjectStaging(root)
    pass_id = hashlib.md5(b"pass").hexdigest()
    mine = area.staged_key(GROUP, "events", "adp.a", pass_id)
    theirs = area.staged_key(GROUP, "events", "adp.a.b", pass_id)
    for key in (mine, theirs, area.manifest_key("adp.a"), area.manifest_key("adp.a.b")):
        root.put_bytes(b"x", key)
    area.discard(GROUP, ["events"], "adp.a")
    assert [root.exists(k) for k in (mine, theirs)] == [False, True]
    assert not root.exists(area.manifest_key("adp.a"))
    assert root.exists(area.manifest_key("adp.a.b"))


# --- telemetry --------------------------------------------------------------------------------


def test_telemetry_on_s3_is_the_same_objects_as_on_disk(
    bucket: str, dagster_lake: DagsterLake, ephemeral_instance: dg.DagsterInstance
) -> None:
    """The batches (one damaged line among them), their rejects, a forgotten sender's steps
    withheld, the day's episodes and the daily report, with the checks of each."""
    pseudonyms = Pseudonymizer.from_env(dev=True)
    land_sample(dagster_lake.landing, pseudonyms)
    batches = sorted(batch_files(dagster_lake.landing))
    first = batch_files(dagster_lake.landing)[batches[0]]
    first.write_bytes(first.read_bytes() + b'{"not": "an envelope"}\n{cut\n')
    forgotten = pseudonyms.user("ana.garcia@example.org")
    assert record_request(dagster_lake.landing, forgotten, via="test")
    ephemeral_instance.add_dynamic_partitions("telemetry_batches", batches)
    ephemeral_instance.add_dynamic_partitions("datasets", [DAY])
    ranged = {
        "dagster/asset_partition_range_start": batches[0],
        "dagster/asset_partition_range_end": batches[-1],
    }
    uri = f"s3://{bucket}/telemetry/lake"
    remote = on_s3(dagster_lake, uri)
    ran: dict[bool, dict[str, Any]] = {}
    verdicts: dict[bool, dict[str, bool]] = {}
    for resource in (dagster_lake.resource, remote):
        batch_run = run(resource, ephemeral_instance, TELEMETRY, tags=ranged)
        day_run = run(resource, ephemeral_instance, RAW | STANDARDIZED, DAY)
        report_run = run(resource, ephemeral_instance, REPORT)
        assert batch_run.success and day_run.success and report_run.success
        assert checks(batch_run) == {
            "raw_telemetry:forgotten_users_absent": True,
            "telemetry_rejects:forgotten_users_absent": True,
        }
        ran[resource.is_local] = {**metadata(batch_run), **metadata(report_run)}
        verdicts[resource.is_local] = checks(day_run)
    # the day's checks judge the store as they judge the disk: all pass but the reject rate,
    # which the two damaged lines landed above push over 5% of the day's few records
    assert verdicts[True] == verdicts[False]
    assert [name for name, passed in verdicts[False].items() if not passed] == [
        "rejects:reject_rate_under_threshold"
    ]
    assert lake_reader.read_arrow(remote.store, GROUP, "rejects", DAY).num_rows == 2
    local = local_files(dagster_lake.root)
    assert {
        f"telemetry/raw_telemetry/{batches[0]}.parquet",
        f"telemetry/telemetry_rejects/{batches[0]}.parquet",
        "telemetry/telemetry_report/all.parquet",
        f"standardized/episodes/{DAY}.parquet",
    } <= set(local)
    assert object_files(uri) == local
    assert ran[True] == ran[False]
    assert ran[False]["raw_telemetry"][WITHHELD] > 0  # the forgotten sender's steps
    rejects = lake_reader.read_arrow(remote.store, "telemetry", "telemetry_rejects", batches[0])
    assert sorted(rejects["reason"].to_pylist()) == ["malformed_json", "not_an_envelope"]
    steps = lake_reader.read_arrow(remote.store, "telemetry", "raw_telemetry", batches[0])
    assert forgotten not in set(steps["user_pseudonym"].to_pylist())
    report = pq.read_table(parse_lake(uri).open(parse_lake(uri).key(
        "telemetry", "telemetry_report", "all.parquet"
    )))  # fmt: skip
    assert report.num_rows >= 1 and sum(report["steps"].to_pylist()) > 0
    assert orjson.loads(report["steps_by_level"][0].as_py())


def test_a_raw_object_rewritten_to_the_same_size_gets_another_stamp(bucket: str) -> None:
    """An object's time has whole seconds: the footer's hash tells apart two raw partitions of
    one size written in the same second, which the size and time alone would not."""
    root = parse_lake(f"s3://{bucket}/stamp/lake")
    area = ObjectStaging(root)
    stamps, sizes = [], []
    for value in (1, 2):
        lake_writer.write_partition(root, "raw", "raw_records", KEY, pl.DataFrame({"n": [value]}))
        stamps.append(area.raw_stamp(KEY))
        sizes.append(
            root.filesystem.get_file_info(lake.partition_key(root, "raw", "raw_records", KEY)).size
        )
    assert sizes[0] == sizes[1] and stamps[0] is not None and stamps[1] is not None
    assert stamps[0][2] != stamps[1][2]
    root.delete(lake.partition_key(root, "raw", "raw_records", KEY))
    assert area.raw_stamp(KEY) is None
