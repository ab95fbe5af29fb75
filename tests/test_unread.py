"""Landing files nothing reads: which, and why; their table, its check and its catalog view."""

from __future__ import annotations

import dagster as dg
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import unread
from bigaction_assets.defs.landing.assets import landing_files_all_read, unread_landing_files
from bigaction_assets.sources import adapters
from tests.conftest import BUNDLED_LANDING


def reasons(landing) -> dict[str, str]:
    return {f.path: f.reason for f in unread.unread_files(landing, adapters())}


@pytest.fixture
def landing(tmp_path):
    root = tmp_path / "landing"
    for relative, data in {
        "adp/synatra.json": b"[]",
        "the_wave/the-wave-clean/README.md": b"# card",
        "the_wave/the-wave-clean/.gitattributes": b"*.parquet lfs",
        "the_wave/the-wave-clean/.cache/huggingface/download/x.lock": b"",
        "predictions/demo.jsonl": b"",
        "forget/abc.json": b"{}",
        "telemetry/2025-01-02/20250102T000000000000Z-0123456789ab.jsonl": b"",
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    pq.write_table(pa.table({"query": ["q"]}), root / "the_wave" / "the-wave-clean" / "t.parquet")
    return root


def test_what_every_reader_takes_is_not_listed(landing):
    assert reasons(landing) == {}, "datasets, predictions, forget requests, docs, hidden files"


def test_the_bundled_landing_folder_is_read_whole():
    assert reasons(BUNDLED_LANDING) == {}


@pytest.mark.parametrize(
    ("relative", "data", "reason", "detail"),
    [
        ("notes.jsonl", b"{}", "no_adapter", "directly in the landing folder"),
        (
            "webshop/rows.jsonl",
            b"{}",
            "no_adapter",
            "nothing reads webshop/; folders read: adapters: adp, ",
        ),
        ("adp/synatra.json.gz", b"\x1f\x8b", "unsupported_extension", ".json, .jsonl files"),
        ("adp/synatra.parquet", b"PAR1", "unsupported_extension", "the adp adapter reads"),
        ("the_wave/shots/0001.png", b"\x89PNG", "unsupported_extension", ".parquet, .csv"),
        ("predictions/demo.csv", b"a,b", "unsupported_extension", "predictions/ holds .jsonl"),
        ("telemetry/stray.jsonl", b"{}", "not_in_a_dataset", "one dataset per UTC day"),
        ("the_wave/broken.parquet", b"PAR1 cut short", "unreadable", "not a Parquet file"),
        ("mind2web/x/test-00000-of-00001.parquet", b"", "unreadable", "not a Parquet file"),
    ],
)
def test_a_file_nothing_reads_is_listed_with_why(landing, relative, data, reason, detail):
    path = landing / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    [found] = unread.unread_files(landing, adapters())
    assert (found.path, found.size, found.reason) == (relative, len(data), reason)
    assert detail in found.detail


def test_a_dataset_name_an_adapter_refuses_lists_its_files_with_the_refusal(landing):
    (landing / "adp" / "bad name.json").write_bytes(b"[]")
    found = {f.path: f for f in unread.unread_files(landing, adapters())}
    assert set(found) == {"adp/bad name.json", "adp/synatra.json"}
    assert all("must use only letters" in f.detail for f in found.values())


def test_the_listing_fingerprint_ignores_mtimes_not_contents(landing):
    stray = landing / "webshop" / "rows.jsonl"
    stray.parent.mkdir()
    stray.write_bytes(b"{}")
    first = unread.listing_fingerprint(unread.unread_files(landing, adapters()))
    stray.touch()
    assert unread.listing_fingerprint(unread.unread_files(landing, adapters())) == first
    stray.write_bytes(b"{}\n{}")
    assert unread.listing_fingerprint(unread.unread_files(landing, adapters())) != first


def materialize(dagster_lake, instance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [unread_landing_files, landing_files_all_read],
        instance=instance,
        resources={"lake": dagster_lake.resource},
        raise_on_error=False,
    )


def query(dagster_lake, sql: str) -> list[tuple]:
    with duckdb.connect(str(dagster_lake.catalog), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_the_table_lists_them_in_the_catalog_and_the_check_warns(dagster_lake, ephemeral_instance):
    dagster_lake.write_landing("adp/synatra.json", "[]")
    result = materialize(dagster_lake, ephemeral_instance)
    assert result.success
    [check] = result.get_asset_check_evaluations()
    assert check.passed
    assert query(dagster_lake, "select count(*) from unread_landing_files") == [(0,)]

    dagster_lake.write_landing("webshop/rows.jsonl", "{}\n")
    dagster_lake.write_landing("adp/synatra.csv", "a\n1\n")
    dagster_lake.write_landing("the_wave/cut.parquet", "PAR1")
    result = materialize(dagster_lake, ephemeral_instance)

    assert result.success, "a warning, not a failure"
    [check] = result.get_asset_check_evaluations()
    assert (check.passed, check.severity) == (False, dg.AssetCheckSeverity.WARN)
    rows = query(dagster_lake, "select path, size, reason from unread_landing_files order by path")
    assert rows == [
        ("adp/synatra.csv", 4, "unsupported_extension"),
        ("the_wave/cut.parquet", 4, "unreadable"),
        ("webshop/rows.jsonl", 3, "no_adapter"),
    ]
    [materialization] = result.asset_materializations_for_node("unread_landing_files")
    assert materialization.metadata["dagster/row_count"].value == 3
    assert materialization.metadata["unread_by_reason"].value == {
        "no_adapter": 1,
        "unreadable": 1,
        "unsupported_extension": 1,
    }
    assert "webshop/rows.jsonl" in materialization.metadata["preview"].value


def test_first_seen_is_kept_so_a_rerun_writes_the_same_bytes(dagster_lake, ephemeral_instance):
    dagster_lake.write_landing("webshop/rows.jsonl", "{}\n")
    materialize(dagster_lake, ephemeral_instance)
    table = dagster_lake.table("landing", "unread_landing_files", "all")
    before = table.read_bytes()
    [(first_seen,)] = query(dagster_lake, "select first_seen from unread_landing_files")

    materialize(dagster_lake, ephemeral_instance)

    assert table.read_bytes() == before
    dagster_lake.write_landing("webshop/more.jsonl", "{}\n")
    materialize(dagster_lake, ephemeral_instance)
    seen = dict(query(dagster_lake, "select path, first_seen from unread_landing_files"))
    assert seen["webshop/rows.jsonl"] == first_seen
    assert seen["webshop/more.jsonl"] >= first_seen


def test_links_are_followed_like_the_adapters_follow_them(tmp_path):
    downloads = tmp_path / "hub" / "the-wave-250"
    downloads.mkdir(parents=True)
    (downloads / "TheWaveMeta.csv").write_text("query,html,xpath\n", encoding="utf-8")
    (downloads / "TheWaveMeta.zip").write_bytes(b"PK")
    (downloads / "loop").symlink_to(tmp_path / "hub")  # a cycle must not hang the walk
    landing = tmp_path / "landing"
    (landing / "the_wave").mkdir(parents=True)
    (landing / "the_wave" / "the-wave-250").symlink_to(downloads)

    found = unread.unread_files(landing, adapters())

    assert [(f.path, f.reason) for f in found] == [
        ("the_wave/the-wave-250/TheWaveMeta.zip", "unsupported_extension")
    ]
