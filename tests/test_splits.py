"""Split assignment is stable, proportional and per episode; duplicates are dropped by content."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from bundled import bundled_episodes

from bigaction_assets.sft.conversation import build_conversation
from bigaction_assets.sft.dedup import SeenContent
from bigaction_assets.sft.examples import content_key
from bigaction_assets.sft.splits import (
    assign_split,
    check_ratios,
    content_hash,
)

RATIOS = {"train": 0.8, "validation": 0.1, "test": 0.1}


def test_assignment_depends_on_the_id_alone():
    ids = [f"synatra/{n}" for n in range(200)]
    before = {i: assign_split(i, RATIOS) for i in ids}
    more = ids + [f"swe-smith/{n}" for n in range(500)]
    after = {i: assign_split(i, RATIOS) for i in reversed(more)}
    assert all(after[i] == before[i] for i in ids)


def test_shares_follow_the_ratios():
    counts = Counter(assign_split(f"mind2web/{n}", RATIOS) for n in range(20_000))
    assert set(counts) == set(RATIOS)
    for name, ratio in RATIOS.items():
        assert abs(counts[name] / 20_000 - ratio) < 0.015, counts


def test_a_salt_draws_another_split():
    ids = [f"e/{n}" for n in range(300)]
    assert [assign_split(i, RATIOS) for i in ids] != [assign_split(i, RATIOS, "v2") for i in ids]


def test_a_zero_ratio_split_gets_nothing():
    ratios = {"train": 1.0, "validation": 0.0, "test": 0.0}
    assert {assign_split(f"e/{n}", ratios) for n in range(500)} == {"train"}


@pytest.mark.parametrize("ratios", [{}, {"train": 0.5, "test": 0.4}, {"train": 1.2, "test": -0.2}])
def test_bad_ratios_are_refused(ratios):
    with pytest.raises(ValueError, match="ratios"):
        check_ratios(ratios)


def test_content_hash_ignores_key_order_but_not_values():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})


def test_seen_content_spills_to_disk_and_stays_exact():
    digests = [bytes([n % 7]) * 16 for n in range(20)]  # 7 distinct, each repeated
    with SeenContent(in_memory=3) as seen:
        firsts = [seen.add(digest) for digest in digests]
        folder = seen._folder
        assert folder is not None and Path(folder.name).exists()  # past 3, on disk
    assert firsts == [n < 7 for n in range(20)]
    assert not Path(folder.name).exists()  # the scratch file goes with it


def test_content_key_is_the_content_hash_of_what_is_trained_on():
    """The key is built from pieces (the tools' JSON once per tool set); it must stay the hash
    of the whole example's canonical JSON, which dedup across datasets compares."""
    keys = set()
    for _, episode, events, _ in bundled_episodes():
        conversation = build_conversation(episode, events)
        turns = [
            (t.role, t.content, [(c.name, c.arguments) for c in t.tool_calls])
            if not t.images
            else (t.role, t.content, [(c.name, c.arguments) for c in t.tool_calls], t.images)
            for t in conversation.turns
        ]
        tools = [spec.as_openai_tool() for spec in conversation.tools]
        expected = content_hash([conversation.system, tools, turns])
        assert content_key(conversation) == expected
        keys.add(expected)
    assert len(keys) > 20  # distinct episodes, distinct keys
