"""Every episode of every bundled and shared ADP sample becomes examples in all three formats,
or is left out for a reason of its data; the formats hold the same turns, each example ends on
the assistant's turn and LLaMA-Factory's loader would keep every one."""

from __future__ import annotations

from collections import Counter
from functools import cache
from typing import Any

import orjson
import pytest
from bundled import bundled_episodes
from conftest import SHARED_DATA, run_ingest
from sft_turns import ASSISTANT_SIDES, disagreements, openai_turns

from bigaction_assets.sft.examples import (
    FORMAT_MARKUP,
    NO_AGENT_ACTION,
    NO_TASK,
    NOT_FOR_TRAINING,
    EpisodeSkipped,
    ExampleSettings,
    episode_examples,
)
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.llama_factory import openai_rules, sharegpt_rules
from bigaction_assets.sft.validate import parsed_renderings, rendering_problems
from bigaction_assets.sources.adp import ADAPTER as ADP

SHARED_ADP = SHARED_DATA / "adp"
SHARED = sorted(p.parent.name for p in SHARED_ADP.glob("*/sample_std.json"))
# Reasons of the data's own to leave an episode out; anything else is our renderer's fault.
DATA_REASONS = {NOT_FOR_TRAINING, NO_TASK, NO_AGENT_ACTION, FORMAT_MARKUP, "does_not_fit_context"}
# The datasets SFT used to lose whole: every episode of theirs must now be kept.
ONCE_LOST = ("androidcontrol", "android_in_the_wild", "swe-play-trajectories")
Episode = tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]


@cache
def shared_episodes(dataset: str) -> tuple[Episode, ...]:
    path = SHARED_ADP / dataset / "sample_std.json"
    ingested = run_ingest(ADP, dataset, [path], path.parent)
    assert not ingested.rows("rejects"), ingested.rows("rejects")[:1]
    pages = {
        r["html_sha"]: r["cleaned_html"] or r["raw_html"] for r in ingested.rows("dom_snapshots")
    }
    events: dict[str, list[dict[str, Any]]] = {}
    for event in ingested.rows("events"):
        events.setdefault(event["episode_id"], []).append(event)
    return tuple((ep, events.get(ep["episode_id"], []), pages) for ep in ingested.rows("episodes"))


def coverage(episodes: tuple[Episode, ...]) -> tuple[list[dict[str, Any]], Counter[str], int]:
    """(examples as renderings by format, episodes left out by reason, episodes kept)."""
    examples, skipped, kept = [], Counter(), 0
    for episode, events, pages in episodes:
        try:
            rows = episode_examples(episode, events, pages, ExampleSettings())
        except EpisodeSkipped as skip:
            skipped[skip.reason] += 1
            continue
        kept += 1
        assert rows
        for row in rows:
            assert all(row[name] is not None for name in SFT_FORMATS)
            assert rendering_problems(parsed_renderings({n: row[n] for n in SFT_FORMATS})) == []
            examples.append({name: orjson.loads(row[name]) for name in SFT_FORMATS})
    return examples, skipped, kept


def assert_formats_agree(examples: list[dict[str, Any]]) -> None:
    ending_elsewhere = Counter()
    refused = Counter()
    for renderings in examples:
        assert disagreements(renderings) == []
        for name, example in renderings.items():
            last = {
                "openai": example.get("messages", [{}])[-1].get("role"),
                "sharegpt": example.get("conversations", [{}])[-1].get("from"),
                "openhands": example.get("conversations", [{}])[-1].get("from"),
            }[name]
            ending_elsewhere[name] += last not in ("assistant", "gpt", "function_call")
        refused["openai"] += bool(openai_rules(renderings["openai"]))
        refused["sharegpt"] += bool(sharegpt_rules(renderings["sharegpt"]))
    assert sum(ending_elsewhere.values()) == 0, ending_elsewhere
    assert sum(refused.values()) == 0, refused


def test_every_bundled_episode_is_covered_alike_in_every_format():
    by_dataset: dict[str, list[Episode]] = {}
    for dataset, episode, events, pages in bundled_episodes():
        by_dataset.setdefault(dataset, []).append((episode, events, pages))
    for dataset, episodes in by_dataset.items():
        examples, skipped, kept = coverage(tuple(episodes))
        assert set(skipped) <= DATA_REASONS, (dataset, skipped)
        assert kept == len(episodes), (dataset, skipped)  # the demo keeps every episode
        assert_formats_agree(examples)


@pytest.mark.skipif(not SHARED, reason=f"no shared ADP samples at {SHARED_ADP} (../shared)")
@pytest.mark.parametrize("dataset", SHARED)
def test_every_shared_episode_is_covered_alike_in_every_format(dataset):
    episodes = shared_episodes(dataset)
    examples, skipped, kept = coverage(episodes)
    assert set(skipped) <= DATA_REASONS, skipped
    assert kept + sum(skipped.values()) == len(episodes)
    assert kept > 0
    if dataset in ONCE_LOST:
        assert kept == len(episodes), skipped
    assert_formats_agree(examples)


@pytest.mark.skipif(not SHARED, reason=f"no shared ADP samples at {SHARED_ADP} (../shared)")
def test_thoughts_survive_in_every_format():
    """Each action's thought is in the openai assistant content, before the call in
    sharegpt's function_call (in LLaMA-Factory's thought words) and before the OpenHands block
    (`disagreements` compares the three)."""
    carried = 0
    for dataset in ("synatra", "swe-gym_openhands_sampled_trajectories", "openhands"):
        examples, _, _ = coverage(shared_episodes(dataset))
        for renderings in examples:
            thoughts = [t[1] for t in openai_turns(renderings["openai"]) if t[0] == "call"]
            values = [
                e["value"]
                for e in renderings["sharegpt"]["conversations"]
                if e["from"] == "function_call"
            ]
            for thought, value in zip(thoughts, values, strict=True):
                if thought:
                    assert value.startswith(f"<think>\n{thought}") and "\n</think>\n\n" in value
                    carried += 1
    assert carried > 50


@pytest.mark.skipif(not SHARED, reason=f"no shared ADP samples at {SHARED_ADP} (../shared)")
def test_android_episodes_open_with_their_goal_as_the_users_turn():
    for dataset in ("androidcontrol", "android_in_the_wild"):
        for episode, _, _ in shared_episodes(dataset):
            assert episode["task"]
        examples, _, _ = coverage(shared_episodes(dataset))
        goals = {episode["task"] for episode, _, _ in shared_episodes(dataset)}
        for renderings in examples:
            [first, second, *_] = openai_turns(renderings["openai"])
            [goal] = [goal for goal in goals if first[1].startswith(goal)]
            assert first[0] == "user" and second[0] in ASSISTANT_SIDES
            assert goal not in second[1]  # the goal is the user's, not repeated by the agent


@pytest.mark.skipif(not SHARED, reason=f"no shared ADP samples at {SHARED_ADP} (../shared)")
def test_swe_play_finishes_are_calls_read_from_the_agents_text():
    examples, skipped, kept = coverage(shared_episodes("swe-play-trajectories"))
    assert kept == 5 and not skipped
    finals = [r["openai"]["messages"][-1] for r in examples]
    finishes = [m["tool_calls"][0]["function"] for m in finals if m.get("tool_calls")]
    finishes = [f for f in finishes if f["name"] == "finish"]
    assert len(finishes) == 5
    for finish in finishes:
        arguments = orjson.loads(finish["arguments"])
        # the run's own claim of completion is not the source's record of it
        assert "task_completed" not in arguments
        assert arguments["message"].startswith("Task ")
        assert (
            "<parameter=" not in arguments["message"] and "</parameter>" not in arguments["message"]
        )
