"""Standardizing in the raw step's pass: the same tables as from the raw table, or none at all."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest, lake, lake_writer, staging
from bigaction_assets.defs.raw.assets import raw_records
from bigaction_assets.defs.standardized.assets import GROUP, TABLES, standardized_tables
from bigaction_assets.page_cuts import PagesMissing
from bigaction_assets.sources.mind2web import Mind2WebAdapter

REPO_LANDING = Path(__file__).resolve().parents[1] / "landing"
KEY = "mind2web.train_demo"


@pytest.fixture
def materialize(dagster_lake, ephemeral_instance):
    """`materialize(assets)` for the Mind2Web demo partition; returns metadata by asset."""
    shutil.copytree(REPO_LANDING / "mind2web", dagster_lake.landing / "mind2web")
    ephemeral_instance.add_dynamic_partitions("datasets", [KEY])

    def _materialize(assets: list[Any], **kwargs: Any) -> dict[str, dict[str, Any]]:
        result = dg.materialize(
            assets,
            partition_key=KEY,
            instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource},
            **kwargs,
        )
        return {
            e.asset_key.to_user_string(): {
                k: v.value for k, v in e.materialization.metadata.items()
            }
            for e in result.get_asset_materialization_events()
        }

    return _materialize


def tables(root: Path) -> dict[str, str]:
    """sha256 of each standardized partition file."""
    return {
        name: hashlib.sha256(lake.partition_path(root, GROUP, name, KEY).read_bytes()).hexdigest()
        for name in TABLES
    }


def staged_files(root: Path) -> list[Path]:
    """Staged tables and manifests (not the temp files a pass is still writing)."""
    return sorted(p for p in root.rglob(".*") if p.name.endswith((".staged", ".staged.json")))


class ListSink:
    """Takes the pages a pass hands to `raw_pages`."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)

    @property
    def total(self) -> int:
        return len(self.rows)


def test_staged_tables_are_byte_for_byte_what_the_raw_table_gives(materialize, dagster_lake):
    root = dagster_lake.data / "lake"
    materialize([raw_records])
    # the tables but the pages (they are raw_pages), and their manifest
    assert len(staged_files(root)) == len(TABLES)
    from_pass = materialize([standardized_tables])
    assert staged_files(root) == []
    pages = lake.partition_path(root, "raw", "raw_pages", KEY)
    assert pages.samefile(lake.partition_path(root, GROUP, "dom_snapshots", KEY))
    taken = tables(root)
    from_table = materialize([standardized_tables])  # nothing staged now: reads the raw table
    assert tables(root) == taken  # the pages the raw table's records give back are raw_pages
    assert from_pass == from_table
    assert from_pass["episodes"]["dagster/row_count"] > 0
    assert from_pass["dom_snapshots"]["dagster/row_count"] > 0


def test_the_raw_table_gives_back_every_record_as_it_stood(materialize, dagster_lake):
    """The pages are cut out of the stored texts, and put back whole when the table is read."""
    root = dagster_lake.data / "lake"
    materialize([raw_records])
    adapter, landing = Mind2WebAdapter(), dagster_lake.landing
    files = ingest.dataset_files(landing, adapter, "train_demo")
    landed = [row["text"] for row in ingest.raw_records(adapter, "train_demo", files, landing)]
    stored = pq.read_table(lake.partition_path(root, "raw", "raw_records", KEY))
    assert all(stored["pages"].to_pylist())  # every task's pages were cut out
    assert sum(len(text) for text in stored["text"].to_pylist()) < sum(map(len, landed)) / 3
    read = ingest.raw_partition_rows(root, KEY, unreadable=False)
    assert [row["text"] for row in read] == landed


def test_a_raw_pages_file_short_of_a_page_is_a_clear_error(materialize, dagster_lake):
    """Pages lost from raw_pages stop the standardize step, naming what is missing, rather than
    standardize records with holes (and the pass's tables, vouched for other pages, stay out)."""
    root = dagster_lake.data / "lake"
    materialize([raw_records])
    path = lake.partition_path(root, "raw", "raw_pages", KEY)
    table = pq.read_table(path)
    with lake_writer.open_partition(root, "raw", "raw_pages", KEY, table.schema) as writer:
        writer.write(table.slice(0, table.num_rows - 1))
    with pytest.raises(PagesMissing, match="raw_pages ends before the record's pages"):
        materialize([standardized_tables])


def test_a_rewritten_raw_partition_is_standardized_from_the_table(materialize, dagster_lake):
    """An erasure (or any rewrite) of the raw partition makes what was staged stale."""
    root = dagster_lake.data / "lake"
    materialize([raw_records])
    path = lake.partition_path(root, "raw", "raw_records", KEY)
    table = pq.read_table(path)
    with lake_writer.open_partition(root, "raw", "raw_records", KEY, table.schema) as writer:
        writer.write(table.slice(1))
    metadata = materialize([standardized_tables])
    assert metadata["episodes"]["dagster/row_count"] == table.num_rows - 1
    assert staged_files(root) == []
    pages = lake.partition_path(root, GROUP, "dom_snapshots", KEY)
    assert not pages.samefile(lake.partition_path(root, "raw", "raw_pages", KEY))


@pytest.mark.parametrize(
    "bad",
    [b'{"annotation_id": "cut", "actions": [', b'{"annotation_id": "a0", "actions": []}'],
    ids=["unreadable", "repeated_id"],
)
def test_records_the_whole_dataset_decides_on_stage_nothing(materialize, dagster_lake, bad):
    source = dagster_lake.landing / "mind2web" / "train_demo.json"
    tasks = orjson.loads(source.read_bytes())
    first = orjson.dumps(tasks[0]).replace(tasks[0]["annotation_id"].encode(), b"a0", 1)
    source.write_bytes(b"[\n" + first + b",\n" + bad + b"\n]\n")
    materialize([raw_records])
    assert staged_files(dagster_lake.data / "lake") == []
    metadata = materialize([standardized_tables])
    assert metadata["rejects"]["dagster/row_count"] >= 1


def test_personal_records_are_never_staged(materialize, dagster_lake, monkeypatch):
    monkeypatch.setattr(Mind2WebAdapter, "holds_personal_data", True, raising=False)
    materialize([raw_records])
    assert staged_files(dagster_lake.data / "lake") == []


def test_an_adapter_failure_leaves_the_raw_step_whole(materialize, dagster_lake, monkeypatch):
    def broken(self, records, dataset):
        next(records)
        raise RuntimeError("a bug in the adapter")
        yield

    monkeypatch.setattr(Mind2WebAdapter, "standardize", broken)
    metadata = materialize([raw_records])
    root = dagster_lake.data / "lake"
    landed = len(orjson.loads((dagster_lake.landing / "mind2web" / "train_demo.json").read_bytes()))
    assert metadata["raw_records"]["dagster/row_count"] == landed
    assert staged_files(root) == []
    with pytest.raises(RuntimeError, match="a bug in the adapter"):
        materialize([standardized_tables])


def test_a_failing_raw_write_is_not_swallowed(tmp_path):
    """An error writing raw rows stops the pass, even inside the standardizing loop."""
    landing = tmp_path / "landing"
    (landing / "mind2web").mkdir(parents=True)
    source = landing / "mind2web" / "train_demo.json"
    shutil.copy(REPO_LANDING / "mind2web" / "train_demo.json", source)
    models = {name: (model, columns) for name, (model, _, columns) in TABLES.items()}
    staged = staging.StagedTables(tmp_path / "lake", GROUP, KEY, models, "1", ListSink())

    def add_raw(row: dict[str, Any]) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), staged:
        staging.read_and_stage(Mind2WebAdapter(), "train_demo", [source], landing, add_raw, staged)
    assert not staged.usable
    assert staged_files(tmp_path / "lake") == []


def test_a_new_pass_discards_what_the_last_one_staged(materialize, dagster_lake):
    """A rerun of the raw step that has begun leaves nothing stale for the standardize step."""
    root = dagster_lake.data / "lake"
    materialize([raw_records])
    assert staged_files(root)
    models = {name: (model, columns) for name, (model, _, columns) in TABLES.items()}
    with staging.StagedTables(root, GROUP, KEY, models, "1", ListSink()) as rerun:
        assert staged_files(root) == []  # only its own temp files, not yet staged
        rerun.abandon()
    assert staging.take(root, GROUP, KEY, list(TABLES), "1") is None
    metadata = materialize([standardized_tables])
    assert metadata["episodes"]["dagster/row_count"] > 0
