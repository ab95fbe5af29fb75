"""The count of actions waiting for a thought, read from the events' columns, is the count the
stage's own rule (`needs_thought`) gives over every event, edge cases and bundled data alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import BUNDLED_LANDING

from bigaction_assets.episodes.reader import iter_episodes
from bigaction_assets.sources.adp import AdpAdapter
from bigaction_assets.thoughts.context import needs_thought
from bigaction_assets.thoughts.requests import count_actions_without_thought


def counted_as_rows(lake: Path, key: str) -> int:
    return sum(
        sum(1 for event in events if needs_thought(event))
        for _, events, _ in iter_episodes(lake, key, with_pages=False)
    )


@pytest.mark.parametrize("path", sorted((BUNDLED_LANDING / "adp").glob("*.json")), ids=str)
def test_the_column_count_is_the_rule_over_every_bundled_event(
    path, tmp_lake, tmp_path, ingest_dataset, write_std_tables
):
    ingested = ingest_dataset(AdpAdapter(), path.stem, [path], tmp_path / "landing")
    write_std_tables(tmp_lake, f"adp.{path.stem}", ingested.tables)
    key = f"adp.{path.stem}"
    assert count_actions_without_thought(tmp_lake, key) == counted_as_rows(tmp_lake, key)


THOUGHTS = [None, "", " \n\t", "\u2003", "x", "  why  "]  # blanks, an em space, text
ACTORS = ["agent", "environment", "user"]
KINDS = ["api_action", "code_action", "message_action", "text_observation"]


def test_thoughts_of_every_shape_and_events_of_every_actor_and_kind(tmp_lake, write_std_tables):
    """Blank thoughts of every shape need one (an em space too, as str.strip takes it), text
    does not; only the agent's actions count, whatever their kind."""
    events = [
        {"episode_id": "e/1", "idx": idx, "kind": kind, "actor": actor, "description": thought}
        for idx, (kind, actor, thought) in enumerate(
            (kind, actor, thought) for kind in KINDS for actor in ACTORS for thought in THOUGHTS
        )
    ]
    write_std_tables(tmp_lake, "adp.shapes", {"events": events})
    by_rule = sum(1 for event in events if needs_thought(event))
    assert by_rule == 3 * 4  # the agent's three kinds of action, in each of four blank shapes
    assert count_actions_without_thought(tmp_lake, "adp.shapes") == by_rule


def test_a_partition_without_events_waits_for_nothing(tmp_lake):
    assert count_actions_without_thought(tmp_lake, "adp.nothing") == 0
