"""Forgetting reaches the pages the raw step cut out of its records (`raw_pages`), and leaves
every raw record that stays readable whole."""

from __future__ import annotations

import dagster as dg
import orjson
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest, lake, lake_writer
from bigaction_assets.defs.raw.assets import raw_records
from bigaction_assets.defs.standardized.assets import standardized_tables
from bigaction_assets.privacy.erasure import Forgotten, erase_lake
from bigaction_assets.sources.mind2web import ADAPTER

DATASET = "train_demo"
KEY = f"mind2web.{DATASET}"


@pytest.fixture
def built(dagster_lake, ephemeral_instance):
    """The dataset through the raw and standardize steps; its lake folder."""
    dagster_lake.add_bundled("mind2web", DATASET)
    ephemeral_instance.add_dynamic_partitions("datasets", [KEY])
    result = dg.materialize(
        [raw_records, standardized_tables],
        partition_key=KEY,
        instance=ephemeral_instance,
        resources={"lake": dagster_lake.resource},
    )
    assert result.success
    return dagster_lake.data / "lake"


def shas(root, group: str, table: str) -> set[str]:
    return set(pq.read_table(lake.partition_path(root, group, table, KEY))["html_sha"].to_pylist())


def only_theirs(root) -> tuple[str, set[str], int, set[str]]:
    """An episode, the pages no other episode shows, its raw record's index and the pages cut
    out of that record (some of its own among them)."""
    events = pq.read_table(lake.partition_path(root, "standardized", "events", KEY)).to_pylist()
    episodes = pq.read_table(lake.partition_path(root, "standardized", "episodes", KEY))
    index = {e["episode_id"]: e["source_record"] for e in episodes.to_pylist()}
    raw = pq.read_table(lake.partition_path(root, "raw", "raw_records", KEY)).to_pylist()
    cut = {row["record_index"]: {c[1] for c in orjson.loads(row["pages"] or "[]")} for row in raw}
    pages: dict[str, set[str]] = {}
    for event in events:
        if event["html_sha"]:
            pages.setdefault(event["episode_id"], set()).add(event["html_sha"])
    for episode, mine in sorted(pages.items()):
        others = set().union(*(p for e, p in pages.items() if e != episode))
        if (mine - others) & cut[index[episode]]:
            return episode, mine - others, index[episode], cut[index[episode]]
    raise AssertionError("no episode has a page of its own cut out of its record")


def landed(dagster_lake) -> list[bytes]:
    files = ingest.dataset_files(dagster_lake.landing, ADAPTER, DATASET)
    rows = ingest.raw_records(ADAPTER, DATASET, files, dagster_lake.landing)
    return [row["text"] for row in rows]


def test_a_raw_record_that_stays_keeps_its_pages(built, dagster_lake):
    """The sender's episode goes, but its raw record is not tied to them by any column (a
    Mind2Web annotation id): the pages cut out of it stay in raw_pages, as they stayed in its
    text before any cut, and every record still reads whole; dom_snapshots loses them."""
    episode, pages, _, cut = only_theirs(built)

    erased = erase_lake(built, Forgotten(episodes=frozenset({episode})))

    assert erased["standardized/dom_snapshots"][KEY] == len(pages)
    assert not pages & shas(built, "standardized", "dom_snapshots")
    assert pages & shas(built, "raw", "raw_pages") == pages & cut  # the others went
    read = ingest.raw_partition_rows(built, KEY, unreadable=False)
    assert [row["text"] for row in read] == landed(dagster_lake)


def test_pages_only_an_erased_raw_record_held_leave_raw_pages(built, dagster_lake):
    episode, pages, index, _ = only_theirs(built)
    path = lake.partition_path(built, "raw", "raw_records", KEY)
    table = pq.read_table(path)
    theirs = table["record_index"].to_pylist().index(index)
    with lake_writer.open_partition(built, "raw", "raw_records", KEY, table.schema) as writer:
        writer.write(table.take([i for i in range(table.num_rows) if i != theirs]))

    erased = erase_lake(built, Forgotten(episodes=frozenset({episode})))

    assert erased["raw/raw_pages"][KEY] == len(pages) == erased["standardized/dom_snapshots"][KEY]
    assert not pages & (
        shas(built, "raw", "raw_pages") | shas(built, "standardized", "dom_snapshots")
    )
    read = ingest.raw_partition_rows(built, KEY, unreadable=False)
    rest = [text for n, text in enumerate(landed(dagster_lake)) if n != theirs]
    assert [row["text"] for row in read] == rest
