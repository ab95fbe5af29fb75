"""The landing sensor: new or changed datasets become partitions and one run each, once.

Ticks go through `SensorDefinition.evaluate_tick`, as the daemon's code server does, so run
requests are resolved against the job and the dynamic partitions the same tick adds. That needs
an instance with a ref, hence a persistent test instance rather than an ephemeral one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from bigaction_assets.definitions import defs
from bigaction_assets.defs import jobs
from bigaction_assets.defs.raw.sensors import UNREAD_CURSOR_KEY
from bigaction_assets.rerun.fingerprint import files_fingerprint

SENSOR = "landing_datasets_sensor"
PARTITIONS = "datasets"
BENCHMARK_PARTITIONS = "benchmark_datasets"
BUNDLED = ("synatra", "agenttuning_mind2web")


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    return defs()


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home), set_dagster_home=False) as instance:
        yield instance


@pytest.fixture
def landing(dagster_lake):
    for name in BUNDLED:
        dagster_lake.add_bundled("adp", name)
    return dagster_lake


@pytest.fixture
def tick(code_location, instance, landing):
    """`tick(cursor)`: one sensor evaluation; applies its partition requests like the daemon."""

    def _tick(cursor: str | None = None):
        context = dg.build_sensor_context(
            instance=instance,
            instance_ref=instance.get_ref(),
            cursor=cursor,
            resources={"lake": landing.resource},
            definitions=code_location,
        )
        data = code_location.resolve_sensor_def(SENSOR).evaluate_tick(context)
        for request in data.dynamic_partitions_requests:
            assert isinstance(request, dg.AddDynamicPartitionsRequest)
            assert request.partitions_def_name in (PARTITIONS, BENCHMARK_PARTITIONS)
            if request.partition_keys:
                name = request.partitions_def_name
                instance.add_dynamic_partitions(name, list(request.partition_keys))
        return data

    return _tick


def requested(data) -> list[str]:
    """The datasets the tick asked to build."""
    return sorted(r.partition_key for r in data.run_requests if r.job_name == "build_dataset")


def added(data, partitions: str = PARTITIONS) -> list[str]:
    return sorted(
        key
        for request in data.dynamic_partitions_requests
        if request.partitions_def_name == partitions
        for key in request.partition_keys
    )


def executor(request: dg.RunRequest) -> str:
    [mode] = request.run_config["execution"]["config"]
    return mode


def test_first_tick_requests_one_run_per_dataset_and_adds_partitions(tick, instance) -> None:
    expected = sorted(f"adp.{name}" for name in BUNDLED)

    data = tick()

    assert requested(data) == expected
    assert len({request.run_key for request in data.run_requests}) == len(expected)
    for request in data.run_requests:
        assert request.tags["dagster/partition"] == request.partition_key
    assert added(data) == expected
    assert sorted(instance.get_dynamic_partitions(PARTITIONS)) == expected
    # the benchmark's partitions: the same landing datasets (telemetry days are not among them)
    assert added(data, BENCHMARK_PARTITIONS) == expected
    assert sorted(instance.get_dynamic_partitions(BENCHMARK_PARTITIONS)) == expected
    assert sorted(json.loads(data.cursor)) == [*expected, UNREAD_CURSOR_KEY]


def test_a_dataset_runs_in_one_process_unless_told_from_which_size_not_to(
    tick, landing, monkeypatch
) -> None:
    monkeypatch.delenv(jobs.PROCESSES_FROM_ENV, raising=False)
    assert {executor(request) for request in tick().run_requests} == {"in_process"}

    synatra = (landing.landing / "adp" / "synatra.json").stat().st_size
    monkeypatch.setenv(jobs.PROCESSES_FROM_ENV, str(synatra / (1 << 20)))  # synatra is "large"
    modes = {request.partition_key: executor(request) for request in tick().run_requests}

    assert modes == {"adp.agenttuning_mind2web": "in_process", "adp.synatra": "multiprocess"}


def test_an_instance_from_before_the_benchmark_partitions_gets_them(tick, instance) -> None:
    """An instance that knows the datasets but not the benchmark's partitions of them (made
    before the benchmark had its own) has them registered, and no dataset is run for it."""
    first = tick()
    instance.delete_dynamic_partition(BENCHMARK_PARTITIONS, "adp.synatra")

    second = tick(first.cursor)

    assert second.run_requests == []
    assert added(second) == [] and added(second, BENCHMARK_PARTITIONS) == ["adp.synatra"]


def test_second_tick_with_the_cursor_requests_nothing(tick) -> None:
    first = tick()

    second = tick(first.cursor)

    assert second.run_requests == []
    assert added(second) == []
    assert second.cursor == first.cursor


def same_size_edit(path: Path) -> None:
    """Change one byte of the file and put its mtime back: size and mtime say nothing."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    at = data.index(b"a")
    data[at : at + 1] = b"b"
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)


def test_touched_file_requests_nothing(tick, landing) -> None:
    first = tick()
    path = landing.landing / "adp" / "synatra.json"
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))

    assert tick(first.cursor).run_requests == []


@pytest.mark.parametrize("change", ["rewrite", "same_size_edit"])
def test_changed_file_requests_exactly_its_partition(tick, landing, change) -> None:
    first = tick()
    path = landing.landing / "adp" / "synatra.json"
    if change == "same_size_edit":
        same_size_edit(path)
    else:
        records = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps(records[:2]), encoding="utf-8")

    second = tick(first.cursor)

    assert requested(second) == ["adp.synatra"]
    assert second.run_requests[0].run_key not in {r.run_key for r in first.run_requests}
    assert added(second) == []
    third = tick(second.cursor)
    assert third.run_requests == []


def test_new_dataset_is_registered_and_requested(tick, landing, instance) -> None:
    first = tick()
    landing.add_bundled("adp", "webarena_successful")

    second = tick(first.cursor)

    assert requested(second) == ["adp.webarena_successful"]
    assert added(second) == ["adp.webarena_successful"]
    assert instance.has_dynamic_partition(PARTITIONS, "adp.webarena_successful")


def test_partition_ingested_by_a_run_is_not_requested_again(
    tick, landing, instance, code_location
) -> None:
    instance.add_dynamic_partitions(PARTITIONS, ["adp.synatra"])
    result = dg.materialize(
        [*code_location.assets, *code_location.asset_checks],
        partition_key="adp.synatra",
        instance=instance,
        resources={"lake": landing.resource},
        selection=["raw_records"],
    )
    assert result.success
    synatra = landing.landing / "adp" / "synatra.json"
    [materialization] = result.asset_materializations_for_node("raw_records")
    fingerprint = files_fingerprint([synatra], landing.landing)
    assert materialization.metadata["landing_fingerprint"].value == fingerprint

    data = tick(None)

    assert requested(data) == ["adp.agenttuning_mind2web"]
    assert added(data) == ["adp.agenttuning_mind2web"]

    # the run's fingerprint is compared, not merely its existence: a changed file runs again
    same_size_edit(synatra)
    assert requested(tick(None)) == ["adp.agenttuning_mind2web", "adp.synatra"]


# --- landing files nothing reads ---------------------------------------------------------------

UNREAD_JOB = "list_unread_landing_files"


def unread_requests(data) -> list[dg.RunRequest]:
    return [r for r in data.run_requests if r.job_name == UNREAD_JOB]


def test_a_file_nothing_reads_is_warned_of_and_listed(tick, landing, capfd) -> None:
    first = tick()
    assert unread_requests(first) == [], "nothing unread: no table to list"
    landing.write_landing("webshop/episodes.jsonl", "{}\n")  # no adapter named webshop
    landing.write_landing("adp/synatra.txt", "notes")  # an ending the adp adapter does not read
    landing.write_landing("the_wave/cut.parquet", "PAR1 and no footer")  # a dataset, unreadable

    capfd.readouterr()
    second = tick(first.cursor)

    assert requested(second) == ["the_wave.cut"], "its run rejects it, record by record"
    [run] = unread_requests(second)
    assert run.partition_key is None
    # the sensor's log, as the daemon prints it (and stores it with the tick for the UI)
    warned = [line for line in capfd.readouterr().err.splitlines() if " - WARNING - " in line]
    assert any("webshop/episodes.jsonl (no_adapter" in line for line in warned), warned
    assert any("adp/synatra.txt (unsupported_extension" in line for line in warned), warned
    assert any("the_wave/cut.parquet (unreadable: not a Parquet file" in line for line in warned)

    third = tick(second.cursor)
    assert third.run_requests == [], "the same files: the table is current"
    again = [line for line in capfd.readouterr().err.splitlines() if " - WARNING - " in line]
    assert len(again) == 1 and "3 landing file(s) still not read" in again[0], "one line a tick"

    (landing.landing / "webshop" / "episodes.jsonl").unlink()
    (landing.landing / "adp" / "synatra.txt").unlink()
    (landing.landing / "the_wave" / "cut.parquet").unlink()
    [emptied] = unread_requests(tick(third.cursor))
    assert emptied.run_key != run.run_key, "listed again, now with nothing unread"


def test_a_folder_of_shards_is_a_partition_and_a_run_per_shard_and_an_edit_runs_one(
    tick, landing
) -> None:
    """Each shard is its own run, so a large dataset spreads over whatever runs them."""
    folder = landing.landing / "adp" / "big"
    folder.mkdir()
    synatra = (landing.landing / "adp" / "synatra.json").read_bytes()
    for name in ("part-00000", "part-00001", "part-00002"):
        (folder / f"{name}.json").write_bytes(
            synatra.replace(b'"id": "', f'"id": "{name}'.encode())
        )
    shards = [f"adp.big~part-0000{n}" for n in range(3)]

    first = tick()

    assert requested(first) == sorted([*shards, *(f"adp.{name}" for name in BUNDLED)])
    assert set(shards) <= set(added(first)) and set(shards) <= set(
        added(first, BENCHMARK_PARTITIONS)
    )

    edited = folder / "part-00001.json"
    edited.write_bytes(edited.read_bytes().replace(b"Objective: ", b"Objective:  ", 1))
    (folder / "part-00003.json").write_bytes(synatra.replace(b'"id": "', b'"id": "part-00003'))
    second = tick(first.cursor)

    assert requested(second) == ["adp.big~part-00001", "adp.big~part-00003"]
    assert added(second) == ["adp.big~part-00003"]
