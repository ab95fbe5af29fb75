"""The SFT floor benchmark times the work every example needs: where an episode fits one window,
its floor rows are the stage's own bytes, so the floor leaves out windows and checks only."""

from __future__ import annotations

from benchmark_scripts import load_benchmark
from bundled import bundled_episodes
from test_sft_parallel import SCHEMA, chunks_of

from bigaction_assets.sft.examples import ExampleSettings
from bigaction_assets.sft.parallel import render_chunk
from bigaction_assets.sft.turns import Conversation, Turn


def test_the_floor_renders_the_stages_bytes_for_episodes_of_one_window():
    floor = load_benchmark("sft_floor")
    settings = ExampleSettings(max_tokens=1_000_000)  # every episode in one window
    [chunk] = chunks_of(bundled_episodes(), len(bundled_episodes()))
    stage = render_chunk(chunk, settings, SCHEMA).table
    assert stage is not None and set(stage.column("windows").to_pylist()) == {1}
    seconds: dict[str, float] = {}
    rows = floor.floor_rows(chunk, settings, seconds)
    by_episode = {
        row["episode_id"]: {k: v.decode() if isinstance(v, bytes) else v for k, v in row.items()}
        for row in rows
    }
    columns = ["episode_id", "content_sha", "openai", "sharegpt", "openhands"]
    for example in stage.select(columns).to_pylist():
        assert by_episode[example["episode_id"]] == example
    assert set(seconds) == set(floor.PARTS) and all(value >= 0 for value in seconds.values())


def test_the_floor_ends_a_conversation_on_its_last_action():
    floor = load_benchmark("sft_floor")
    turns = [Turn("user", "task"), Turn("assistant", "act"), Turn("user", "what came after")]
    whole = Conversation("e", "system", [], turns)
    assert [turn.content for turn in floor.up_to_the_last_action(whole).turns] == ["task", "act"]
