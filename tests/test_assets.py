"""The raw and standardized assets, run through Dagster on a temporary lake.

Each test copies a few bundled landing datasets into a temporary folder, materializes their
partitions with `dg.materialize` on an in-memory instance, and asserts on the Parquet files, the
materialization metadata, the asset-check results and the DuckDB catalog.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import orjson
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest, lake_reader, lake_writer, standardized_rows
from bigaction_assets.definitions import defs
from bigaction_assets.images.verify import undecodable_images
from bigaction_assets.rerun.fingerprint import files_fingerprint
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.standardized import EpisodeSchema
from bigaction_assets.sources import adapters
from tests.conftest import write_standardized
from tests.images import corrupt_body, png

PARTITIONS = "datasets"
INGEST = dg.AssetSelection.groups("raw", "standardized")
ASSET_GROUPS = {
    "raw_records": "raw",
    "episodes": "standardized",
    "events": "standardized",
    "dom_snapshots": "standardized",
    "web_candidates": "standardized",
    "images": "standardized",
    "rejects": "standardized",
}
# tables the raw step writes beside its asset's: the pages cut out of the records
RAW_STEP_TABLES = {"raw_pages": "raw"}
PREVIEW_HEADERS = {
    "raw_records": "| file | line | record_id | error |",
    "episodes": "| episode_id | source | task | num_events |",
    "events": "| episode_id | idx | kind | function | content |",
    "dom_snapshots": "| html_sha | raw_bytes |",
    "web_candidates": "| episode_id | step | backend_node_id | tag | positive |",
    "images": "| image_sha | format | width | height | byte_size | location |",
    "rejects": "| file | line | stage | reason | detail |",
}
REPO_LANDING = Path(__file__).resolve().parents[1] / "landing"
MIND2WEB_DEMO = REPO_LANDING / "mind2web" / "train_demo.json"


@pytest.fixture(scope="module")
def code_location() -> dg.Definitions:
    return defs()


@pytest.fixture(scope="module")
def pipeline(code_location: dg.Definitions) -> list[Any]:
    """Every asset and asset check of the code location; runs select the ingest groups."""
    return [*code_location.assets, *(code_location.asset_checks or [])]


@pytest.fixture(scope="module")
def ingest_checks(code_location: dg.Definitions) -> dict[str, bool]:
    """Every asset check of the ingest assets, with whether it is blocking."""
    graph = code_location.resolve_asset_graph()
    return {
        key.name: bool(graph.get_check_spec(key).blocking)
        for key in graph.asset_check_keys
        if key.asset_key.to_user_string() in ASSET_GROUPS
    }


@pytest.fixture
def run(pipeline, dagster_lake, ephemeral_instance):
    """`run(partition_key)`: registers the partition and materializes it; never raises."""

    def _run(partition_key: str) -> dg.ExecuteInProcessResult:
        if not ephemeral_instance.has_dynamic_partition(PARTITIONS, partition_key):
            ephemeral_instance.add_dynamic_partitions(PARTITIONS, [partition_key])
        return dg.materialize(
            pipeline,
            partition_key=partition_key,
            instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource},
            selection=INGEST,
            raise_on_error=False,
        )

    return _run


def materializations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetMaterialization]:
    found = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        found[materialization.asset_key.to_user_string()] = materialization
    return found


def check_results(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {
        evaluation.check_name: evaluation for evaluation in result.get_asset_check_evaluations()
    }


def meta(materialization: dg.AssetMaterialization, key: str) -> Any:
    return materialization.metadata[key].value


def parquet_rows(path: Path) -> int:
    return pq.ParquetFile(path).metadata.num_rows


def landing_records(path: Path) -> int:
    return len(json.loads(path.read_text(encoding="utf-8")))


def lake_state(root: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under the lake: (mtime_ns, size, sha256 of its bytes)."""
    state = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[path.relative_to(root).as_posix()] = (stat.st_mtime_ns, stat.st_size, digest)
    return state


def assert_checks_passed(result: dg.ExecuteInProcessResult, ingest_checks: dict[str, bool]) -> None:
    evaluated = check_results(result)
    assert set(evaluated) == set(ingest_checks), "every asset check ran, blocking ones included"
    failed = {name: e.description for name, e in evaluated.items() if not e.passed}
    assert not failed, f"checks failed: {failed}"
    assert {name for name, e in evaluated.items() if e.blocking} == {
        name for name, blocking in ingest_checks.items() if blocking
    }


def test_partitions_write_files_metadata_and_pass_checks(run, dagster_lake, ingest_checks) -> None:
    datasets = {"adp.synatra": "synatra", "adp.webarena_successful": "webarena_successful"}
    landing_files = {key: dagster_lake.add_bundled("adp", name) for key, name in datasets.items()}

    for key, landing_file in landing_files.items():
        result = run(key)
        assert result.success
        made = materializations(result)
        assert set(made) == set(ASSET_GROUPS)
        for asset, materialization in made.items():
            assert materialization.partition == key
            path = dagster_lake.root / ASSET_GROUPS[asset] / asset / f"{key}.parquet"
            assert path.is_file(), f"{asset} wrote no {path}"
            rows = meta(materialization, "dagster/row_count")
            assert parquet_rows(path) == rows, f"{asset}: file rows differ from metadata"
            preview = materialization.metadata["preview"]
            assert isinstance(preview, dg.MarkdownMetadataValue)
            lines = preview.value.splitlines()
            if rows:
                assert lines[0] == PREVIEW_HEADERS[asset]
                assert len(lines) == 2 + min(rows, 5)
            else:
                assert lines == ["_no rows_"]

        records = landing_records(landing_file)
        assert meta(made["raw_records"], "dagster/row_count") == records
        assert meta(made["raw_records"], "unreadable_by_reason") == {}
        assert meta(made["raw_records"], "landing_fingerprint") == files_fingerprint(
            [landing_file], dagster_lake.landing
        )
        # every raw record ends in exactly one episode or one reject
        assert meta(made["episodes"], "dagster/row_count") == records
        assert meta(made["rejects"], "dagster/row_count") == 0
        assert meta(made["episodes"], "rejects_by_reason") == {}
        assert meta(made["rejects"], "rejects_by_reason") == {}
        first_episode = f"{datasets[key]}/0"
        assert first_episode in made["episodes"].metadata["preview"].value
        assert_checks_passed(result, ingest_checks)

    pages = lake_reader.read_partition(
        dagster_lake.root, "standardized", "dom_snapshots", "adp.webarena_successful"
    )
    assert pages.height > 0, "webarena_successful carries HTML pages"


def test_bad_records_become_rejects_and_warn_without_failing(
    run, dagster_lake, ingest_checks
) -> None:
    good = json.loads((REPO_LANDING / "adp" / "synatra.json").read_text(encoding="utf-8"))[:3]
    unknown = json.loads(json.dumps(good[0]))
    unknown["id"] = "unknown-class"
    unknown["content"][0]["class_"] = "telepathy_observation"
    lines = [orjson.dumps(record).decode() for record in good]
    lines += ['{"id": "broken", "content": [', orjson.dumps(unknown).decode()]
    dagster_lake.write_landing("adp/messy.jsonl", "\n".join(lines) + "\n")

    result = run("adp.messy")

    assert result.success, "bad records are rejected, not fatal"
    made = materializations(result)
    assert meta(made["raw_records"], "dagster/row_count") == 5
    assert meta(made["raw_records"], "unreadable_by_reason") == {"malformed_json": 1}
    assert meta(made["episodes"], "dagster/row_count") == 3
    expected_reasons = {"malformed_json": 1, "unknown_class": 1}
    assert meta(made["episodes"], "rejects_by_reason") == expected_reasons
    assert meta(made["rejects"], "rejects_by_reason") == expected_reasons

    rejects = lake_reader.read_partition(dagster_lake.root, "standardized", "rejects", "adp.messy")
    assert meta(made["rejects"], "dagster/row_count") == rejects.height == 2
    by_reason = {row["reason"]: row for row in rejects.to_dicts()}
    assert set(by_reason) == set(expected_reasons)
    assert by_reason["malformed_json"]["stage"] == "read"
    assert by_reason["malformed_json"]["line"] == 4
    assert by_reason["unknown_class"]["stage"] == "standardize"
    assert by_reason["unknown_class"]["line"] == 5
    assert "telepathy_observation" in by_reason["unknown_class"]["detail"]
    assert all(row["file"] == "adp/messy.jsonl" for row in rejects.to_dicts())
    assert "malformed_json" in made["rejects"].metadata["preview"].value

    evaluated = check_results(result)
    rate = evaluated["reject_rate_under_threshold"]
    assert not rate.passed
    assert rate.severity == dg.AssetCheckSeverity.WARN
    rates = {r["dataset"]: r for r in rate.metadata["reject_rates"].value}
    assert rates["adp.messy"]["rejected"] == 2
    assert rates["adp.messy"]["reject_rate"] == pytest.approx(2 / 5)
    blocking = {name for name, is_blocking in ingest_checks.items() if is_blocking}
    assert all(evaluated[name].passed for name in blocking)


def test_failing_blocking_check_fails_the_run(run, dagster_lake) -> None:
    landing_file = dagster_lake.add_bundled("adp", "synatra")
    # another dataset already holds an episode with the id synatra's first record will get
    adapter = adapters()["adp"]
    raw = ingest.raw_records(adapter, "synatra", [landing_file], dagster_lake.landing)
    first = next(
        row.values
        for row in standardized_rows.standardize(adapter, "synatra", raw)
        if row.table == "episodes"
    )
    seeded = frame(EpisodeSchema, [{**first, "dataset": "adp.elsewhere"}])
    lake_writer.write_partition(
        dagster_lake.root, "standardized", "episodes", "adp.elsewhere", seeded
    )

    result = run("adp.synatra")

    assert not result.success
    unique = check_results(result)["episode_ids_unique"]
    assert not unique.passed
    assert unique.blocking
    offenders = unique.metadata["offenders"].value
    assert [o["episode_id"] for o in offenders] == [first["episode_id"]] == ["synatra/0"]
    assert offenders[0]["copies"] == 2
    assert unique.metadata["partitions"].value == 2, "read across the table"
    failed_steps = {event.step_key for event in result.get_step_failure_events()}
    assert failed_steps == {"episodes_episode_ids_unique"}


def test_a_step_decodes_the_images_of_its_own_partition_only(run, dagster_lake) -> None:
    """Another partition's damaged screenshot fails that partition's check, not every build
    after it (the check decoded every stored image at each step before)."""
    bad = corrupt_body(png(size=(64, 48)))
    row = {"image_sha": hashlib.sha256(bad).hexdigest(), "format": "png", "width": 64,
           "height": 48, "byte_size": len(bad), "location": "elsewhere", "bytes": bad}  # fmt: skip
    write_standardized(dagster_lake.root, "adp.elsewhere", {"images": [row]})
    dagster_lake.add_bundled("mind2web", "train_demo", images=True)

    built = run("mind2web.train_demo")

    assert built.success
    decoded = check_results(built)["images_decode"]
    assert decoded.passed and decoded.blocking
    # what that partition's own step (or a run of the whole table) finds
    for partitions in (["adp.elsewhere"], None):
        found = undecodable_images(dagster_lake.root, partitions=partitions)
        assert [o["image_sha"] for o in found] == [row["image_sha"]]
    assert undecodable_images(dagster_lake.root, partitions=["mind2web.train_demo"]) == []


def test_new_partition_leaves_other_partitions_untouched(run, dagster_lake) -> None:
    for name in ("synatra", "agenttuning_mind2web"):
        dagster_lake.add_bundled("adp", name)
        assert run(f"adp.{name}").success
    before = lake_state(dagster_lake.root)
    assert len(before) == 2 * len(ASSET_GROUPS | RAW_STEP_TABLES)

    dagster_lake.add_bundled("adp", "webarena_successful")
    assert run("adp.webarena_successful").success

    after = lake_state(dagster_lake.root)
    assert {path: after.get(path) for path in before} == before
    assert set(after) - set(before) == {
        f"{group}/{asset}/adp.webarena_successful.parquet"
        for asset, group in (ASSET_GROUPS | RAW_STEP_TABLES).items()
    }


def test_metadata_totals_across_partitions_are_numbers_beside_the_partition_counts(
    run, dagster_lake
) -> None:
    """Each table's materialization carries its partition's rows and the whole table's, as
    integers (the UI's Plots tab draws numbers, not JSON)."""
    counts: dict[str, list[int]] = {asset: [] for asset in ASSET_GROUPS}
    for name in ("synatra", "agenttuning_mind2web"):
        dagster_lake.add_bundled("adp", name)
        result = run(f"adp.{name}")
        assert result.success
        for asset, materialization in materializations(result).items():
            counts[asset].append(meta(materialization, "dagster/row_count"))
    last = materializations(result)
    for asset, group in ASSET_GROUPS.items():
        total = last[asset].metadata["total_rows_all_partitions"]
        assert isinstance(total, dg.IntMetadataValue), asset
        on_disk = sum(parquet_rows(p) for p in (dagster_lake.root / group / asset).glob("*"))
        assert total.value == sum(counts[asset]) == on_disk, asset
        assert meta(last[asset], "partitions_in_lake") == 2
    assert meta(last["episodes"], "total_rows_all_partitions") > meta(
        last["episodes"], "dagster/row_count"
    )


def test_rematerializing_replaces_the_partition(run, dagster_lake) -> None:
    dagster_lake.add_bundled("adp", "synatra")
    first = materializations(run("adp.synatra"))
    before = lake_state(dagster_lake.root)
    files = sorted(before)

    again = run("adp.synatra")

    assert again.success
    second = materializations(again)
    for asset in ASSET_GROUPS:
        assert meta(second[asset], "dagster/row_count") == meta(first[asset], "dagster/row_count")
    after = lake_state(dagster_lake.root)
    assert sorted(after) == files, "same files, no temp files left"
    # deterministic: the same input and code give the same bytes, file by file
    assert {path: state[1:] for path, state in after.items()} == {
        path: state[1:] for path, state in before.items()
    }
    assert not [p for p in dagster_lake.root.rglob("*") if p.name.endswith(".tmp")]
    with duckdb.connect() as con:
        total, distinct = con.execute(
            f"select count(*), count(distinct episode_id) from "
            f"read_parquet('{dagster_lake.root.as_posix()}/standardized/episodes/*.parquet')"
        ).fetchone()
    assert total == distinct == landing_records(dagster_lake.landing / "adp" / "synatra.json")


def test_catalog_has_a_view_per_table(run, dagster_lake) -> None:
    expected = {}
    for name in ("synatra", "webarena_successful"):
        expected[name] = landing_records(dagster_lake.add_bundled("adp", name))
        assert run(f"adp.{name}").success

    with duckdb.connect(str(dagster_lake.catalog), read_only=True) as con:
        counts = dict(con.execute("select source, count(*) from episodes group by 1").fetchall())
        views = {
            row[0]
            for row in con.execute(
                "select view_name from duckdb_views() where not internal"
            ).fetchall()
        }
    assert counts == expected
    assert views == set(ASSET_GROUPS | RAW_STEP_TABLES)


@pytest.mark.skipif(
    not MIND2WEB_DEMO.exists(), reason=f"no Mind2Web landing file at {MIND2WEB_DEMO}"
)
def test_mind2web_partition_writes_pages_and_candidates(run, dagster_lake, ingest_checks) -> None:
    target = dagster_lake.landing / "mind2web" / MIND2WEB_DEMO.name
    target.parent.mkdir(parents=True)
    target.write_bytes(MIND2WEB_DEMO.read_bytes())

    result = run("mind2web.train_demo")

    assert result.success
    made = materializations(result)
    for asset in ("web_candidates", "dom_snapshots", "episodes", "events"):
        rows = meta(made[asset], "dagster/row_count")
        assert rows > 0, f"{asset} is empty"
        assert parquet_rows(dagster_lake.table(ASSET_GROUPS[asset], asset, "mind2web.train_demo"))
    assert check_results(result)["html_shas_resolve"].passed
    assert_checks_passed(result, ingest_checks)


def test_hub_parquet_and_csv_partitions_pass_the_spine(run, dagster_lake, ingest_checks) -> None:
    from test_the_wave_layouts import CLEAN_ROWS, PAGE, clean_shard, wave_250_csv

    clean_shard(dagster_lake.landing / "the_wave" / "the-wave-clean", "test-00000-of-00001.parquet",
                CLEAN_ROWS)  # fmt: skip
    wave_250_csv(dagster_lake.landing / "the_wave" / "wave250.csv", [("Go", PAGE, "//a")])

    clean = "the_wave.the-wave-clean~data~test-00000-of-00001"  # a folder: a key per shard
    for key, rows in ((clean, 2), ("the_wave.wave250", 1)):
        result = run(key)
        assert result.success
        made = materializations(result)
        assert meta(made["raw_records"], "dagster/row_count") == rows
        assert meta(made["episodes"], "dagster/row_count") == rows
        assert_checks_passed(result, ingest_checks)
