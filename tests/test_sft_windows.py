"""Windows of long episodes: boundaries, tool results with their calls, the repeated task,
cut steps, impossible budgets, and every bundled sample in every format within budget."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from bundled import bundled_episodes

from bigaction_assets.sft.conversation import build_conversation
from bigaction_assets.sft.counting import conversation_tokens
from bigaction_assets.sft.lengths import FORMAT_TOKENS
from bigaction_assets.sft.observations import make_observation_renderer
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import render_sharegpt
from bigaction_assets.sft.turns import Turn
from bigaction_assets.sft.validate import openai_problems, openhands_problems, sharegpt_problems
from bigaction_assets.sft.windows import NoAction, split_into_windows
from bigaction_assets.tokens import count_tokens_uncached

FORMATS = {
    "openai": (render_openai, openai_problems),
    "sharegpt": (render_sharegpt, sharegpt_problems),
    "openhands": (render_openhands, openhands_problems),
}
TASK = "Buy a red shirt."


def episode(pages: list[str], finish: bool = True) -> list[dict[str, Any]]:
    """The task, then per page an observation and a click; a final message if `finish`."""
    events = [{"idx": 0, "kind": "text_observation", "actor": "user", "content": TASK}]
    for step, page in enumerate(pages):
        events.append(
            {
                "kind": "web_observation",
                "actor": "environment",
                "url": f"http://s/{step}",
                "axtree": page,
            }
        )
        events.append(
            {
                "kind": "api_action",
                "actor": "agent",
                "function": "click",
                "kwargs": json.dumps({"bid": str(step)}),
                "description": f"step {step}",
            }
        )
    if finish:
        events.append({"kind": "message_action", "actor": "agent", "content": "Done."})
    return [{**event, "idx": idx} for idx, event in enumerate(events)]  # fmt: skip


def conversation(pages: list[str], finish: bool = True):
    return build_conversation({"episode_id": "demo/1"}, episode(pages, finish))


STRUCTURAL_KEYS = ("role", "from", "type")


def shown_texts(value: Any, key: str = "") -> list[str]:
    """Every text of a rendered example a chat template can show (not its roles or keys)."""
    if isinstance(value, str):
        return [] if key in STRUCTURAL_KEYS else [value]
    if isinstance(value, dict):
        return [text for k, item in value.items() for text in shown_texts(item, k)]
    if isinstance(value, list):
        return [text for item in value for text in shown_texts(item, key)]
    return []


def check(window, max_tokens: int) -> None:
    for name, (render, problems) in FORMATS.items():
        example = render(window)
        assert problems(example) == [], name
        shown = sum(count_tokens_uncached(text) for text in shown_texts(example))
        assert shown <= conversation_tokens(window) <= max_tokens, name


def page(n: int) -> str:
    return " ".join(f"[{k}] link 'item {k}'" for k in range(n))


def test_short_episode_is_one_window_equal_to_input():
    conv = conversation([page(3), page(3)])
    assert split_into_windows(conv, 4096) == [conv]


def test_windows_repeat_task_end_on_actions_and_pass_results_on():
    conv = conversation([page(60) for _ in range(8)])
    max_tokens = conversation_tokens(replace(conv, turns=conv.turns[:1])) + 1800
    windows = split_into_windows(conv, max_tokens)
    assert len(windows) >= 3
    assert [(w.window, w.windows) for w in windows] == [
        (k, len(windows)) for k in range(len(windows))
    ]
    results = {t.tool_call_id: t.content for t in conv.turns if t.role == "tool"}
    for window, following in zip(windows, [*windows[1:], None], strict=True):
        check(window, max_tokens)
        assert window.turns[0] == conv.turns[0] and window.turns[0].content.startswith(TASK)
        assert window.turns[1].role != "tool"  # never begins with a result
        called = {c.id for t in window.turns for c in t.tool_calls}
        answered = {t.tool_call_id for t in window.turns if t.role == "tool"}
        assert answered <= called
        # every window ends where a trainer learns: on the assistant's turn
        assert window.turns[-1].role == "assistant"
        if following is not None:  # what answered its last call opens the next one
            [last_call] = window.turns[-1].tool_calls
            assert following.turns[1] == Turn("user", results[last_call.id])
    # every action is trained on exactly once, in order
    actions = [t for w in windows for t in w.turns if t.role == "assistant"]
    assert actions == [t for t in conv.turns if t.role == "assistant"]
    # the page an action saw opens the next window, after the task, in one user message
    second = render_openai(windows[1])["messages"]
    assert [m["role"] for m in second[:3]] == ["system", "user", "assistant"]
    assert second[1]["content"].startswith(TASK + "\n\n[Current URL")


def test_what_follows_the_last_action_is_in_no_window():
    events = episode([page(5), page(5)], finish=False)
    events.append({"idx": len(events), "kind": "web_observation", "actor": "environment",
                   "url": "http://s/end", "axtree": "[9] text 'after the last click'"})  # fmt: skip
    conv = build_conversation({"episode_id": "demo/1"}, events)
    assert conv.turns[-1].role == "tool"
    [window] = split_into_windows(conv, 4096)
    assert window.turns == conv.turns[:-1]
    for render, _ in FORMATS.values():
        assert "after the last click" not in json.dumps(render(window))


def test_a_conversation_without_an_action_has_no_window():
    conv = build_conversation({"episode_id": "demo/1"}, episode([])[:1])
    with pytest.raises(NoAction, match="no assistant turn"):
        split_into_windows(conv, 4096)


def test_oversized_step_gets_its_observation_cut():
    conv = conversation([page(20), page(2000), page(20)])
    max_tokens = 2000
    windows = split_into_windows(conv, max_tokens)
    for window in windows:
        check(window, max_tokens)
    contents = [t.content for w in windows for t in w.turns]
    assert any("[... truncated to" in c for c in contents)
    assert [t for w in windows for t in w.turns if t.role == "assistant"] == [
        t for t in conv.turns if t.role == "assistant"
    ]
    assert split_into_windows(conv, max_tokens) == windows  # deterministic


def test_unfinished_episode_ends_like_the_input():
    conv = conversation([page(80) for _ in range(5)], finish=False)
    windows = split_into_windows(conv, conversation_tokens(conv) // 2)
    assert windows[-1].turns[-1] == conv.turns[-1]
    for window in windows:
        check(window, conversation_tokens(conv) // 2)


def test_impossible_budget_raises():
    conv = conversation([page(3)])
    with pytest.raises(ValueError, match="system prompt, tools and task"):
        split_into_windows(conv, 50)


SAMPLES = bundled_episodes()


@pytest.mark.parametrize(("max_tokens", "observation_tokens"), [(2048, 256), (8192, 2048)])
def test_every_bundled_window_fits_and_validates(max_tokens, observation_tokens):
    split = refused = 0
    for _, ep, events, pages in SAMPLES:
        render = make_observation_renderer(pages, observation_tokens, "html")
        conv = build_conversation(ep, events, render_observation=render)
        try:
            windows = split_into_windows(conv, max_tokens)
        except ValueError as error:  # e.g. 20 browser tools take ~1,600 of 2,048 tokens
            assert "too long" in str(error)
            refused += 1
            continue
        split += len(windows) > 1
        for window in windows:
            check(window, max_tokens)
    assert split > 0  # the budgets do exercise windowing
    assert refused <= len(SAMPLES) // 4  # refusals are the rare, genuinely impossible steps


def test_conversation_tokens_is_the_longest_format():
    for _, ep, events, _ in SAMPLES:
        conv = build_conversation(ep, events)
        counts = [FORMAT_TOKENS[name](render(conv)) for name, (render, _) in FORMATS.items()]
        assert conversation_tokens(conv) == max(counts)
        for render, _ in FORMATS.values():
            shown = sum(count_tokens_uncached(text) for text in shown_texts(render(conv)))
            assert shown <= conversation_tokens(conv)
