"""The rules the stage checks on a window's turns stand for its consumers' rules on the rendered
example: whatever the turn checks pass, every consumer's rules pass on the renderings too."""

from __future__ import annotations

import pytest
from bundled import bundled_episodes
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sft_counting import screenshots, texts, turn_roles

from bigaction_assets.sft.conversation import build_conversation
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.images import OPENAI_MAX_IMAGES
from bigaction_assets.sft.observations import make_observation_renderer
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import render_sharegpt
from bigaction_assets.sft.tools import KNOWN_TOOLS
from bigaction_assets.sft.turns import Conversation, ToolCall, Turn
from bigaction_assets.sft.validate import rendering_problems
from bigaction_assets.sft.window_rules import window_problems
from bigaction_assets.sft.windows import split_into_windows

RENDERERS = {"openai": render_openai, "sharegpt": render_sharegpt, "openhands": render_openhands}


def consumers_refuse(window: Conversation) -> list[str]:
    return rendering_problems({name: render(window) for name, render in RENDERERS.items()})


def task() -> Turn:
    return Turn("user", "Open the settings page.")


def call(number: int) -> Turn:
    return Turn("assistant", "I click.", tool_calls=[ToolCall(f"c{number}", "click", {"bid": "3"})])


def result(number: int, images: int = 0) -> Turn:
    shown = [f"{k:064x}.png" for k in range(images)]
    return Turn("tool", "clicked", tool_call_id=f"c{number}", name="click", images=shown)


def window(*turns: Turn) -> Conversation:
    return Conversation("t/1", "Be brief.", [KNOWN_TOOLS["click"]], list(turns))


@pytest.mark.parametrize(("max_tokens", "observation_tokens"), [(2048, 256), (8192, 2048)])
def test_every_bundled_window_passes_both(max_tokens, observation_tokens):
    checked = 0
    for _, episode, events, pages in bundled_episodes():
        render = make_observation_renderer(pages, observation_tokens, "axtree")
        conv = build_conversation(episode, events, render_observation=render)
        try:
            windows = split_into_windows(conv, max_tokens)
        except ValueError:
            continue  # an episode that gives no window is skipped before any check
        for each in windows:
            assert window_problems(each, SFT_FORMATS) == []
            assert consumers_refuse(each) == []
            checked += 1
    assert checked >= 50  # the bundled samples give 58 at the larger budget


BROKEN = {
    "ends on a result": (window(task(), call(1), result(1)), "does not end on the assistant"),
    "opens with a call": (window(call(1), result(1), call(2)), "opens with the assistant"),
    "a result of no call": (window(task(), call(1), result(7), call(2)), "answers no call"),
    "a call left unanswered": (
        window(task(), call(1), Turn("user", "go on"), call(2)),
        "calls before it are not answered",
    ),
    "a result after the user's words": (
        window(task(), call(1), Turn("user", "here:"), result(1), call(2)),
        "does not follow its call",
    ),
    "too many screenshots": (
        window(task(), call(1), result(1, images=OPENAI_MAX_IMAGES + 1), call(2)),
        f"OpenAI takes at most {OPENAI_MAX_IMAGES}",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_window_is_refused_by_both(case):
    broken, reason = BROKEN[case]
    found = window_problems(broken, SFT_FORMATS)
    assert any(reason in problem for problem in found), found
    assert consumers_refuse(broken)


def test_the_screenshot_cap_is_openais_alone():
    many = window(task(), call(1), result(1, images=OPENAI_MAX_IMAGES + 1), call(2))
    assert window_problems(many, ("sharegpt", "openhands")) == []


@st.composite
def turn_runs(draw: st.DrawFn) -> Conversation:
    """A task, then steps: an assistant turn (a call, two, or none) and what follows it (its
    result, mostly; sometimes another call's, the user's words, or nothing), and now and then a
    turn of any role anywhere; texts and screenshots of every kind."""
    turns: list[Turn] = [Turn("user", draw(texts), images=draw(screenshots))]
    for step in range(draw(st.integers(0, 5))):
        made = [
            ToolCall(f"call_{step}_{k}", "click", {"bid": draw(texts)})
            for k in range(draw(st.sampled_from([1, 1, 1, 0, 2])))
        ]
        turns.append(Turn("assistant", draw(texts), tool_calls=made))
        after = draw(st.sampled_from(["result", "result", "result", "other", "user", "none"]))
        answers = made[-1].id if made and after == "result" else "call_none"
        if after in ("result", "other"):
            shown, content = draw(screenshots), draw(texts)
            turns.append(Turn("tool", content, tool_call_id=answers, name="click", images=shown))
        if after == "user" or draw(st.integers(0, 4)) == 0:
            turns.append(Turn("user", draw(texts), images=draw(screenshots)))
    if draw(st.integers(0, 4)):  # mostly a window's end: the assistant's last turn
        turns.append(Turn("assistant", draw(texts)))
    if draw(st.integers(0, 3)) == 0:  # a turn of any role anywhere
        role = draw(turn_roles)
        stray = Turn(role, draw(texts), tool_call_id="call_0_0" if role == "tool" else None)
        turns.insert(draw(st.integers(0, len(turns))), stray)
    return window(*turns)


@given(turn_runs())
@settings(max_examples=500, deadline=None)
def test_what_the_turn_checks_pass_every_consumer_takes(conv):
    if not window_problems(conv, SFT_FORMATS):
        assert consumers_refuse(conv) == []


def test_generated_runs_pass_the_turn_checks_often_enough_to_prove_something():
    passed = [0]

    @given(turn_runs())
    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    def count(conv):
        passed[0] += not window_problems(conv, SFT_FORMATS)

    count()
    assert passed[0] >= 20
