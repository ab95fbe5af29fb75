"""Lengths composed from turns equal lengths counted from the rendered text, in every format."""

from __future__ import annotations

from dataclasses import replace

import pytest
from bundled import bundled_episodes
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets.joined_tokens import facts, joined, last_segment
from bigaction_assets.sft.conversation import build_conversation
from bigaction_assets.sft.counting import FORMAT_LENGTHS, conversation_tokens
from bigaction_assets.sft.lengths import FORMAT_TOKENS
from bigaction_assets.sft.observations import make_observation_renderer
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import render_sharegpt
from bigaction_assets.sft.tools import KNOWN_TOOLS
from bigaction_assets.sft.turns import Conversation, ToolCall, Turn
from bigaction_assets.sft.windows import split_into_windows
from bigaction_assets.tokens import count_tokens_uncached, segments

RENDERERS = {"openai": render_openai, "sharegpt": render_sharegpt, "openhands": render_openhands}

# Texts that stress how pieces meet at a join: punctuation before a newline, leading blanks,
# newlines and carriage returns at either end, empty texts, digits, non-ASCII letters.
PIECES = ["", " ", "\n", "\r\n", "\t", "  x", "a", ".", "!?", "x.\n", "\n\nz", "42", "é", "[3]",
          "link 'Home'", " indented", "```", "\n ", "end.", "<p>"]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


def assert_composed_equals_rendered(conv: Conversation) -> None:
    for name, length in FORMAT_LENGTHS.items():
        assert length(conv) == FORMAT_TOKENS[name](RENDERERS[name](conv)), name


@given(st.lists(texts, max_size=5), st.sampled_from(["\n\n", "\n", " "]))
@settings(max_examples=300, deadline=None)
def test_joined_facts_count_the_joined_text(parts, separator):
    composed = joined(separator, [facts(part) for part in parts])
    text = separator.join(parts)
    assert composed.tokens == count_tokens_uncached(text)
    assert composed.text == text
    again = joined(separator, [composed, facts(text)])  # joins of joins compose too
    assert again.tokens == count_tokens_uncached(separator.join([text, text]))


turn_roles = st.sampled_from(["user", "assistant", "tool"])
# what an observation turn shows besides its text: none, one or two screenshots
screenshots = st.lists(st.sampled_from(["a1.png", "b2.webp", "c3.jpeg"]), max_size=2)


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    turns = []
    for position, role in enumerate(draw(st.lists(turn_roles, max_size=8))):
        content = draw(texts)
        if role == "assistant":
            calls = [
                ToolCall(f"call_{position}_{k}", "click", {"bid": draw(texts)})
                for k in range(draw(st.integers(0, 2)))
            ]
            turns.append(Turn("assistant", content, tool_calls=calls))
        elif role == "tool":
            shown = draw(screenshots)
            turns.append(
                Turn("tool", content, tool_call_id=f"call_{position}", name="click", images=shown)
            )
        else:
            turns.append(Turn("user", content, images=draw(screenshots)))
    return Conversation("gen/1", draw(texts), [KNOWN_TOOLS["click"]], turns)


@given(conversations())
@settings(max_examples=200, deadline=None)
def test_generated_conversations_count_as_rendered(conv):
    assert_composed_equals_rendered(conv)


@pytest.mark.parametrize(("max_tokens", "observation_tokens"), [(2048, 256), (8192, 2048)])
def test_every_bundled_window_counts_as_rendered(max_tokens, observation_tokens):
    for _, episode, events, pages in bundled_episodes():
        render = make_observation_renderer(pages, observation_tokens, "axtree")
        conv = build_conversation(episode, events, render_observation=render)
        assert_composed_equals_rendered(conv)
        try:
            windows = split_into_windows(conv, max_tokens)
        except ValueError:
            continue  # a step that cannot fit: test_sft_windows covers the refusal
        for window in windows:
            assert_composed_equals_rendered(window)
            assert window.tokens == conversation_tokens(window) <= max_tokens


def test_an_empty_conversation_counts_its_frame():
    conv = Conversation("e/1", "Be brief.", [], [])
    assert_composed_equals_rendered(conv)
    assert_composed_equals_rendered(replace(conv, turns=[Turn("assistant", "")]))


@given(st.lists(texts, max_size=6).map("\n".join))
@settings(max_examples=300, deadline=None)
def test_the_last_segment_is_found_from_the_end(text):
    assert last_segment(text) == segments(text)[-1]
