"""The cluster's S3 server and its lake, without PostgreSQL or Redis: the service started and
stopped with its bucket saved and restored (or, lost, taking the rerun stamps with it), every
process pointed at it, and `compare` reading a cluster's outputs back from it."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets.catalog import refresh_catalog
from bigaction_assets.cluster import __main__ as cli
from bigaction_assets.cluster import backing, compare, control, objectstore, processes
from bigaction_assets.cluster.layout import ClusterLayout, ClusterState, service_env
from bigaction_assets.cluster.store_settings import (
    CLUSTER_LAKE_ENV,
    UnknownLakeMode,
    lake_mode,
)
from bigaction_assets.rerun.stamps import STAMPS_FILE
from bigaction_assets.s3_settings import S3Settings

SLEEPER = "import time; time.sleep(600)"  # a worker that only waits to be stopped
OUTPUT_FILES = {
    "sft/openai/train.jsonl": b'{"messages": []}\n',
    "release/README.md": b"# card\n",
    "release/data/sft_openai/train-00000.parquet": b"PAR1 release PAR1",
    "benchmark/leaderboard.md": b"| model | score |\n",
    "reward/llama_factory/dataset_info.json": b"{}\n",
}


def layout_in(root: Path) -> ClusterLayout:
    layout = ClusterLayout(data_dir=root, landing=root / "landing")
    return layout


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[ClusterLayout, ClusterState]]:
    """A cluster folder with an s3 lake and its S3 server running; stopped after the test."""
    layout = layout_in(tmp_path / "cluster")
    state = ClusterState.fresh("s3")
    state.save(layout.state_file)
    try:
        objectstore.start_s3(layout, state)
        yield layout, state
    finally:
        (layout.services / "s3.saving").unlink(missing_ok=True)
        objectstore.stop_s3(layout, state)


def write_stamps(layout: ClusterLayout) -> Path:
    path = layout.data_dir / STAMPS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"format": 1, "stamps": {}}')
    return path


def stored(state: ClusterState) -> dict[str, bytes]:
    root = objectstore.lake_root(state).beside("")
    return {
        info.path.removeprefix("bigaction/"): root.read_bytes(info.path)
        for info in compare.store_objects(root)
    }


def test_the_s3_service_keeps_its_bucket_across_a_stop_and_loses_nothing_silently(
    tmp_path: Path,
) -> None:
    layout = layout_in(tmp_path / "cluster")
    state = ClusterState.fresh("s3")
    state.save(layout.state_file)
    stamps = write_stamps(layout)
    try:
        objectstore.start_s3(layout, state)
        assert objectstore.answering(state) and (layout.logs / "s3.log").is_file()
        assert not stamps.exists(), "an empty bucket: the stamps' outputs are not there"
        lake = objectstore.lake_root(state)
        lake.put_bytes(b"PAR1 rows PAR1", lake.key("raw/raw_records/adp.a.parquet"))
        lake.beside("sft").put_bytes(b"{}\n", "bigaction/sft/openai/train.jsonl")
        write_stamps(layout)  # as a build would after writing them
        before = stored(state)
        pid = processes.pid_of(layout, objectstore.SERVICE)
        objectstore.stop_s3(layout, state)
        assert pid is not None and not processes.group_alive(pid)
        assert not objectstore.answering(state)
        assert (layout.s3_snapshot / "lake/raw/raw_records/adp.a.parquet").is_file()

        objectstore.start_s3(layout, state)
        assert (
            stored(state)
            == before
            == {
                "lake/raw/raw_records/adp.a.parquet": b"PAR1 rows PAR1",
                "sft/openai/train.jsonl": b"{}\n",
            }
        )
        assert stamps.exists(), "the same objects: the stamps still hold"
        assert not layout.s3_snapshot.exists(), "the server holds the only current copy"

        # the server dies unsaved: its objects are gone, and so are the stamps that named them
        killed = processes.pid_of(layout, objectstore.SERVICE)
        os.killpg(killed, signal.SIGKILL)
        while processes.group_alive(killed):
            time.sleep(0.05)
        objectstore.start_s3(layout, state)
        assert stored(state) == {}
        assert not stamps.exists()
    finally:
        objectstore.stop_s3(layout, state)


def test_a_bucket_that_cannot_be_saved_keeps_its_server_running(
    store: tuple[ClusterLayout, ClusterState],
) -> None:
    layout, state = store
    lake = objectstore.lake_root(state)
    lake.put_bytes(b"PAR1 x PAR1", lake.key("raw/raw_records/adp.a.parquet"))
    (layout.services / "s3.saving").write_text("in the way")  # the copy cannot be made
    with pytest.raises(objectstore.StoreError, match="left running: its bucket could not be"):
        objectstore.stop_s3(layout, state)
    assert objectstore.answering(state)
    assert stored(state) == {"lake/raw/raw_records/adp.a.parquet": b"PAR1 x PAR1"}


def test_every_process_of_an_s3_cluster_reaches_the_store_and_a_local_one_nothing_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = layout_in(tmp_path)
    state = ClusterState.fresh("s3")
    env = service_env(layout, state, {"PATH": "/usr/bin"})
    assert env["BIGACTION_LAKE_URI"] == "s3://bigaction/lake"
    for name in ("AWS_ENDPOINT_URL", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, env[name])
    assert S3Settings.from_env() == objectstore.settings(state)  # what the workers' lake reads
    local = service_env(layout, ClusterState.fresh("local"), {"PATH": "/usr/bin"})
    assert not {"BIGACTION_LAKE_URI", "AWS_ENDPOINT_URL"} & local.keys()
    assert lake_mode({}) == "s3" and lake_mode({CLUSTER_LAKE_ENV: "local"}) == "local"
    with pytest.raises(UnknownLakeMode, match="BIGACTION_CLUSTER_LAKE='gcs'"):
        lake_mode({CLUSTER_LAKE_ENV: "gcs"})


def test_a_state_file_from_before_the_store_loads_with_a_local_lake(tmp_path: Path) -> None:
    layout = layout_in(tmp_path)
    layout.services.mkdir(parents=True)
    ports = {"postgres": 1, "redis": 2, "code_server": 3, "webserver": 4}
    layout.state_file.write_text(json.dumps({"ports": ports, "postgres_password": "p"}))
    state = ClusterState.load(layout.state_file)
    assert state is not None and state.lake == "local" and state.ports.redis == 2
    assert state.ports.s3 not in (0, *ports.values())
    state.save(layout.state_file)
    assert ClusterState.load(layout.state_file) == state


def write_reference(data_dir: Path) -> None:
    """A demo data folder in small: a lake table, the outputs beside it, the catalog."""
    table = data_dir / "lake/raw/raw_records"
    table.mkdir(parents=True)
    pq.write_table(pa.table({"id": ["a", "b"], "n": [1, 2]}), table / "adp.a.parquet")
    for name, data in OUTPUT_FILES.items():
        (data_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (data_dir / name).write_bytes(data)
    refresh_catalog(data_dir / "lake", data_dir / compare.CATALOG)


def publish(reference: Path, layout: ClusterLayout, state: ClusterState) -> None:
    """The reference's outputs into the cluster's store, as its workers publish them."""
    lake = objectstore.lake_root(state)
    for folder, root in compare.output_roots(lake).items():
        root.publish_folder(reference / folder)
    refresh_catalog(lake, layout.data_dir / compare.CATALOG)


def compare_cli(expected: Path, actual: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    code = cli.main(["compare", str(expected), str(actual)])
    lines = capsys.readouterr().out.splitlines()
    assert code == (0 if lines[-1] == "identical" else 1)
    return lines[1:]


def test_compare_reads_a_cluster_s_outputs_back_from_its_store(
    tmp_path: Path,
    store: tuple[ClusterLayout, ClusterState],
    capsys: pytest.CaptureFixture[str],
) -> None:
    layout, state = store
    reference = tmp_path / "demo"
    write_reference(reference)
    publish(reference, layout, state)
    # a stale local lake in the cluster's folder is not what is compared: the store is
    (layout.data_dir / "lake/raw/raw_records").mkdir(parents=True)
    (layout.data_dir / "lake/raw/raw_records/adp.a.parquet").write_bytes(b"stale")
    assert compare_cli(reference, layout.data_dir, capsys) == ["identical"]

    lake = objectstore.lake_root(state)
    sft = lake.beside("sft")
    sft.put_bytes(b"changed\n", sft.key("openai/train.jsonl"))
    lake.beside("release").put_bytes(b"new", "bigaction/release/extra.txt")
    lake.put_bytes(b"half", lake.key("raw/raw_records/.adp.b.parquet.0f.tmp"))  # not an output
    spool = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": ["a", "c"], "n": [1, 3]}), spool)
    lake.put_file(spool, lake.key("raw/raw_records/adp.a.parquet"))
    assert compare_cli(reference, layout.data_dir, capsys) == [
        "file only in the actual folder: release/extra.txt",
        "file differs: lake/raw/raw_records/adp.a.parquet",
        "file differs: sft/openai/train.jsonl",
        "view differs: raw_records",  # the catalog's view, read over the store's objects
        "4 difference(s)",
    ]


def test_compare_says_when_the_cluster_s_store_is_not_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    layout = layout_in(tmp_path / "cluster")
    ClusterState.fresh("s3").save(layout.state_file)
    write_reference(tmp_path / "demo")
    assert cli.main(["compare", str(tmp_path / "demo"), str(layout.data_dir)]) == 2
    assert "which is not running" in capsys.readouterr().err


def test_cluster_down_saves_the_bucket_after_the_workers_stop_and_before_the_broker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = layout_in(tmp_path / "cluster")
    state = ClusterState.fresh("s3")
    state.save(layout.state_file)
    order: list[str] = []

    def stopped(name: str) -> Callable[..., None]:
        def stop(*_: object) -> None:
            order.append(f"{name}; s3 answering: {objectstore.answering(state)}")

        return stop

    # PostgreSQL and Redis are not what is under test (nor installed everywhere)
    monkeypatch.setattr(backing, "stop_redis", stopped("redis"))
    monkeypatch.setattr(backing, "stop_postgres", stopped("postgres"))
    try:
        objectstore.start_s3(layout, state)
        worker = processes.start(layout, "worker1", [sys.executable, "-c", SLEEPER], {})
        lake = objectstore.lake_root(state)
        lake.put_bytes(b"PAR1 y PAR1", lake.key("raw/raw_records/adp.a.parquet"))
        control.down(layout)
        assert not processes.group_alive(worker) and not objectstore.running(layout)
        assert order == ["redis; s3 answering: False", "postgres; s3 answering: False"]
        saved = layout.s3_snapshot / "lake/raw/raw_records/adp.a.parquet"
        assert saved.read_bytes() == b"PAR1 y PAR1"
    finally:
        objectstore.stop_s3(layout, state)
        processes.stop(layout, ["worker1"])
