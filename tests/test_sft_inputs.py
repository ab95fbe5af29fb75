"""Episodes and their events read back in step, in the order written, never out of order."""

from __future__ import annotations

import polars as pl
import pytest

from bigaction_assets.lake import partition_path
from bigaction_assets.sft import inputs
from bigaction_assets.sft.inputs import EventsOutOfOrder, iter_episodes

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
