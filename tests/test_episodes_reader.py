"""Episodes and their events read back in step, in the order written, never out of order."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets.episodes import pages as pages_module
from bigaction_assets.episodes import reader as inputs
from bigaction_assets.episodes.pages import PageReader
from bigaction_assets.episodes.reader import EventsOutOfOrder, iter_episodes
from bigaction_assets.lake import partition_path

KEY = "adp.tiny"


def write(lake, episodes: list[str], events: list[tuple[str, int]]) -> None:
    tables = {
        "episodes": pl.DataFrame({"episode_id": episodes}),
        "events": pl.DataFrame(
            {
                "episode_id": [e for e, _ in events],
                "idx": [i for _, i in events],
                "html_sha": [None] * len(events),
            },
            schema={"episode_id": pl.String, "idx": pl.Int32, "html_sha": pl.String},
        ),
    }
    for asset, table in tables.items():
        path = partition_path(lake, "standardized", asset, KEY)
        path.parent.mkdir(parents=True, exist_ok=True)
        table.write_parquet(path)


def read(lake) -> list[tuple[str, list[int]]]:
    return [
        (episode["episode_id"], [event["idx"] for event in events])
        for episode, events, _ in iter_episodes(lake, KEY)
    ]


def test_events_follow_their_episodes_across_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "EPISODES_PER_BATCH", 2)
    write(
        tmp_path,
        ["b", "a", "empty", "c"],
        [("b", 1), ("b", 0), ("a", 0), ("c", 0), ("c", 1), ("c", 2)],
    )
    assert read(tmp_path) == [("b", [0, 1]), ("a", [0]), ("empty", []), ("c", [0, 1, 2])]


def test_scattered_events_are_an_error_not_a_silent_loss(tmp_path):
    write(tmp_path, ["a", "b"], [("a", 0), ("b", 0), ("a", 1)])
    with pytest.raises(EventsOutOfOrder, match="events of a"):
        read(tmp_path)


def test_orphan_events_are_an_error(tmp_path):
    write(tmp_path, ["a"], [("a", 0), ("ghost", 0)])
    with pytest.raises(EventsOutOfOrder, match="ghost"):
        read(tmp_path)


def _sha(n: int) -> str:
    return f"{n:064x}"


def write_pages(path, pages: list[tuple[str, str | None, str | None]], per_group: int) -> None:
    table = pa.table(
        {
            "html_sha": [sha for sha, _, _ in pages],
            "raw_html": [raw for _, raw, _ in pages],
            "cleaned_html": [cleaned for _, _, cleaned in pages],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=per_group)


@pytest.mark.parametrize("whole_group_bytes", [pages_module.WHOLE_GROUP_BYTES, 0])
def test_pages_are_found_in_any_row_group_cleaned_html_first(
    tmp_path, monkeypatch, whole_group_bytes
):
    """Small row groups are read whole; large ones (here: every one) a few rows at a time."""
    monkeypatch.setattr(pages_module, "WHOLE_GROUP_BYTES", whole_group_bytes)
    monkeypatch.setattr(pages_module, "ROWS_PER_READ", 2)
    path = tmp_path / "pages.parquet"
    pages = [(_sha(n), f"<raw {n}>", None if n % 3 == 0 else f"<clean {n}>") for n in range(12)]
    write_pages(path, pages, per_group=5)
    assert pq.ParquetFile(path).num_row_groups == 3
    reader = PageReader(path)
    found = reader.pages([_sha(9), _sha(1), _sha(3), _sha(6), _sha(99)])  # unordered, 1 unknown
    assert found == {_sha(9): "<raw 9>", _sha(1): "<clean 1>", _sha(3): "<raw 3>",
                     _sha(6): "<raw 6>"}  # fmt: skip
    both = reader.raw_and_cleaned([_sha(0), _sha(4), _sha(11)])
    assert both == {_sha(0): ("<raw 0>", None), _sha(4): ("<raw 4>", "<clean 4>"),
                    _sha(11): ("<raw 11>", "<clean 11>")}  # fmt: skip
    assert reader.raw([_sha(7), _sha(99)]) == {_sha(7): "<raw 7>"}
    assert PageReader(tmp_path / "absent.parquet").pages([_sha(1)]) == {}


def test_each_episode_gets_its_pages_when_batches_end_on_page_count(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "PAGES_PER_BATCH", 2)
    episodes = [f"e{n}" for n in range(5)]
    events = pl.DataFrame(
        {
            "episode_id": [e for e in episodes for _ in range(2)],
            "idx": [i for _ in episodes for i in range(2)],
            "html_sha": [_sha(n * 2 + i) for n in range(5) for i in range(2)],
        },
        schema={"episode_id": pl.String, "idx": pl.Int32, "html_sha": pl.String},
    )
    for asset, table in {
        "episodes": pl.DataFrame({"episode_id": episodes}),
        "events": events,
    }.items():
        path = partition_path(tmp_path, "standardized", asset, KEY)
        path.parent.mkdir(parents=True, exist_ok=True)
        table.write_parquet(path)
    pages = [(_sha(n), f"<page {n}>", None) for n in reversed(range(10))]  # stored out of order
    write_pages(partition_path(tmp_path, "standardized", "dom_snapshots", KEY), pages, 3)
    for n, (episode, _, shown) in enumerate(iter_episodes(tmp_path, KEY)):
        assert episode["episode_id"] == f"e{n}"
        assert shown == {_sha(2 * n + i): f"<page {2 * n + i}>" for i in range(2)}


def test_chunks_cut_events_across_row_groups_into_whole_contiguous_tables(tmp_path, monkeypatch):
    """Chunks end inside row groups and row groups end inside episodes: every chunk still gets
    exactly its episodes' events, as one contiguous table (a slice of a row group would
    carry the whole group to the worker)."""
    monkeypatch.setattr(inputs, "EPISODES_PER_BATCH", 3)
    episodes = [f"e{n}" for n in range(8)]
    events = [(e, i) for n, e in enumerate(episodes) for i in range(n % 4)]  # e0 and e4: none
    write(tmp_path, episodes, events)
    path = partition_path(tmp_path, "standardized", "events", KEY)
    pq.write_table(pq.read_table(path), path, row_group_size=2)
    assert pq.ParquetFile(path).num_row_groups > 3
    chunks = list(inputs.iter_chunks(tmp_path, KEY))
    assert [c.episodes.column("episode_id").to_pylist() for c in chunks] == [
        episodes[0:3],
        episodes[3:6],
        episodes[6:8],
    ]
    for chunk in chunks:
        mine = set(chunk.episodes.column("episode_id").to_pylist())
        ids, idxs = chunk.events["episode_id"].to_pylist(), chunk.events["idx"].to_pylist()
        assert [(e, i) for e, i in events if e in mine] == list(zip(ids, idxs, strict=True))
        assert all(column.num_chunks == 1 for column in chunk.events.columns)
    assert read(tmp_path) == [(e, list(range(n % 4))) for n, e in enumerate(episodes)]


def test_a_chunk_ends_once_its_episodes_hold_enough_events(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "EVENTS_PER_CHUNK", 4)
    episodes = ["a", "b", "c", "d"]
    write(tmp_path, episodes, [(e, i) for e in episodes for i in range(3)])
    sizes = [(len(c), c.events.num_rows) for c in inputs.iter_chunks(tmp_path, KEY)]
    assert sizes == [(2, 6), (2, 6)]  # a chunk ends with the episode that reaches the bound
