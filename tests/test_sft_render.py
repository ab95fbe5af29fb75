"""SFT renderers on a hand-built episode and on every bundled sample, checked by the validators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_ingest
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets.sft.conversation import NO_OBSERVATION, MissingTask, build_conversation
from bigaction_assets.sft.examples import (
    NO_AGENT_ACTION,
    NO_TASK,
    EpisodeSkipped,
    ExampleSettings,
    episode_examples,
)
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_blocks import read_message
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import (
    dataset_info,
    render_sharegpt,
    tools_json,
)
from bigaction_assets.sft.tools import KNOWN_TOOLS, infer_spec
from bigaction_assets.sft.turns import Conversation, ToolCall
from bigaction_assets.sft.validate import openai_problems, openhands_problems, sharegpt_problems
from bigaction_assets.sft.windows import split_into_windows
from bigaction_assets.sources.adp import ADAPTER as ADP
from bigaction_assets.sources.mind2web import ADAPTER as MIND2WEB

ROOT = Path(__file__).resolve().parents[1]
LANDING = ROOT / "landing"
RENDERINGS = [
    (render_openai, openai_problems),
    (render_sharegpt, sharegpt_problems),
    (render_openhands, openhands_problems),
]


def event(idx: int, kind: str, actor: str, **fields: Any) -> dict[str, Any]:
    return {"episode_id": "demo/1", "idx": idx, "kind": kind, "actor": actor, **fields}


TINY = [
    event(0, "text_observation", "user", content="Buy a red shirt."),
    event(1, "web_observation", "environment", url="http://shop", axtree="[93] button 'Buy'"),
    event(2, "api_action", "agent", function="click", kwargs='{"bid": "\\"93\\""}',
          description="The Buy button is 93."),
    event(3, "web_observation", "environment", url="http://shop/cart", axtree="[7] text 'Done'"),
    event(4, "message_action", "agent", content="Bought it.", description="It worked."),
]  # fmt: skip


@pytest.fixture
def tiny():
    return build_conversation({"episode_id": "demo/1"}, TINY)


def test_openai_tiny(tiny):
    example = render_openai(tiny)
    roles = [m["role"] for m in example["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    call = example["messages"][2]["tool_calls"][0]
    assert example["messages"][2]["content"] == "The Buy button is 93."
    assert call["function"] == {"name": "click", "arguments": '{"bid": "93"}'}
    assert example["messages"][3]["tool_call_id"] == call["id"]
    assert "[7] text 'Done'" in example["messages"][3]["content"]
    finish = example["messages"][4]["tool_calls"][0]["function"]
    assert finish == {"name": "finish", "arguments": '{"message": "Bought it."}'}
    names = [tool["function"]["name"] for tool in example["tools"]]
    assert {"click", "fill", "goto", "new_tab", "tab_focus", "finish"} <= set(names)
    assert openai_problems(example) == []


def test_sharegpt_tiny(tiny):
    example = render_sharegpt(tiny)
    assert [e["from"] for e in example["conversations"]] == [
        "human", "function_call", "observation", "function_call",
    ]  # fmt: skip
    click = example["conversations"][1]["value"]
    # the thought in LLaMA-Factory's default thought words, then the call's JSON
    call = '{"name": "click", "arguments": {"bid": "93"}}'
    assert click == f"<think>\nThe Buy button is 93.\n</think>\n\n{call}"
    assert example["conversations"][3]["value"].startswith("<think>\nIt worked.\n</think>\n\n{")
    assert "Buy a red shirt." in example["conversations"][0]["value"]
    assert isinstance(json.loads(example["tools"]), list)
    assert sharegpt_problems(example) == []
    older = render_sharegpt(tiny, thought_words=("<think>", "</think>"))
    assert older["conversations"][1]["value"].startswith("<think>The Buy button is 93.</think>{")
    assert sharegpt_problems(older, thought_words=("<think>", "</think>")) == []


def test_openhands_tiny(tiny):
    example = render_openhands(tiny)
    assert [e["from"] for e in example["conversations"]] == ["human", "gpt", "human", "gpt"]
    click = example["conversations"][1]["value"]
    assert click.startswith("The Buy button is 93.\n\n<function=click>")
    assert read_message(click) == ("The Buy button is 93.", ("click", {"bid": "93"}))
    assert "- click(bid: string): Click an element." in example["system"]
    assert len(example["system"]) < 4000  # the tool docs once, compactly, not ADP's ~18 KB
    assert openhands_problems(example) == []


def test_dataset_info_entry():
    entry = dataset_info({"bigaction_web": "bigaction_web.json"})["bigaction_web"]
    assert entry["formatting"] == "sharegpt"
    assert entry["columns"] == {"messages": "conversations", "system": "system", "tools": "tools"}
    assert entry["tags"]["function_tag"] == "function_call"
    assert entry["tags"]["observation_tag"] == "observation"


def test_unanswered_call_gets_explicit_no_observation():
    events = [
        event(0, "text_observation", "user", content="Run it."),
        event(1, "code_action", "agent", language="bash", content="ls"),
        event(2, "text_observation", "user", content="Now submit."),
        event(3, "api_action", "agent", function="submit", kwargs="{}"),
    ]
    conversation = build_conversation({"episode_id": "demo/2"}, events)
    assert [t.role for t in conversation.turns] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    assert conversation.turns[2].content == NO_OBSERVATION
    assert [t.name for t in conversation.tools] == ["execute_bash", "submit"]
    for example, problems in (
        (render_openai(conversation), openai_problems),
        (render_sharegpt(conversation), sharegpt_problems),
        (render_openhands(conversation), openhands_problems),
    ):
        assert problems(example) == []


def test_rendering_is_deterministic(tiny):
    again = build_conversation({"episode_id": "demo/1"}, list(reversed(TINY)))
    for render in (render_openai, render_sharegpt, render_openhands):
        assert json.dumps(render(tiny)) == json.dumps(render(again))


def _bundled() -> list[tuple[Any, str]]:
    cases = [(ADP, path.stem) for path in sorted((LANDING / "adp").glob("*.json"))]
    return [*cases, (MIND2WEB, "train_demo")]


@pytest.mark.parametrize(("adapter", "dataset"), _bundled(), ids=lambda v: getattr(v, "name", v))
def test_bundled_samples_render_valid(adapter, dataset):
    path = LANDING / adapter.name / f"{dataset}.json"
    ingested = run_ingest(adapter, dataset, [path], LANDING)
    episodes = ingested.rows("episodes")
    assert episodes and not ingested.rows("rejects")
    events = ingested.rows("events")
    for episode in episodes:
        own = [e for e in events if e["episode_id"] == episode["episode_id"]]
        conversation = build_conversation(episode, own)
        assert conversation.tools
        for window in split_into_windows(conversation, 8192):  # examples are windows
            for render, problems in RENDERINGS:
                assert problems(render(window)) == []


@settings(max_examples=100, deadline=None)
@given(
    name=st.text(min_size=1, max_size=12),
    arguments=st.dictionaries(
        st.text(max_size=8),
        st.one_of(
            st.text(max_size=20),
            st.integers(),
            st.booleans(),
            st.none(),
            st.floats(allow_nan=False),
        ),
        max_size=4,
    ),
)
def test_function_call_text_is_exactly_json_dumps(name, arguments):
    call = ToolCall("call_1", name, arguments)
    expected = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    assert call.call_json == expected


def test_tools_json_is_json_dumps_of_the_functions():
    specs = [KNOWN_TOOLS["click"], KNOWN_TOOLS["fill"], infer_spec("ajouter", [{"quantité": 2}])]
    conv = Conversation("t/1", "s", specs, [])
    expected = json.dumps([spec.as_function() for spec in specs], ensure_ascii=False)
    assert tools_json(conv) == expected
    assert tools_json(Conversation("t/2", "s", [], [])) == "[]"


def test_an_episode_opening_with_an_action_gets_its_task_first():
    events = [
        event(0, "api_action", "agent", function="click", kwargs='{"bid": "\\"1\\""}'),
        event(1, "image_observation", "environment", image_path="1.png"),
        event(2, "message_action", "agent", content="Done."),
    ]
    conversation = build_conversation({"episode_id": "demo/3", "task": "Open it."}, events)
    assert [(t.role, t.content) for t in conversation.turns[:2]] == [
        ("user", "Open it."),
        ("assistant", ""),
    ]
    for render, problems in RENDERINGS:
        assert problems(render(conversation)) == []
    with pytest.raises(MissingTask, match="opens with an action and records no task"):
        build_conversation({"episode_id": "demo/3"}, events)


def test_an_opening_message_that_states_the_task_is_the_users_turn():
    events = [
        event(0, "message_action", "agent", content="Open the app."),
        event(1, "image_observation", "user", image_path="0.png"),
        event(2, "api_action", "agent", function="click", kwargs='{"bid": "\\"1\\""}'),
    ]
    conversation = build_conversation({"episode_id": "demo/4", "task": "Open the app."}, events)
    assert [t.role for t in conversation.turns] == ["user", "assistant"]
    assert conversation.turns[0].content == "Open the app.\n\n[Image: 0.png]"
    other = build_conversation({"episode_id": "demo/4", "task": "Something else."}, events)
    assert [t.role for t in other.turns] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize(
    ("task", "events", "reason"),
    [
        (None, [event(0, "api_action", "agent", function="click", kwargs="{}")], NO_TASK),
        ("Look.", [event(0, "text_observation", "user", content="Look.")], NO_AGENT_ACTION),
    ],
)
def test_episodes_without_task_or_action_are_left_out_for_their_data(task, events, reason):
    episode = {"episode_id": "demo/5", "dataset": "adp.demo", "source": "demo", "task": task}
    with pytest.raises(EpisodeSkipped) as skipped:
        episode_examples(episode, events, {}, ExampleSettings())
    assert skipped.value.reason == reason


def test_a_finish_the_agent_takes_back_is_answered_like_any_call():
    events = [
        event(0, "text_observation", "user", content="Count them."),
        event(1, "api_action", "agent", function="finish", kwargs='{"message": "\\"3\\""}'),
        event(2, "text_observation", "user", content="Count again."),
        event(3, "message_action", "agent", content="4"),
    ]
    conversation = build_conversation({"episode_id": "demo/6"}, events)
    assert [t.role for t in conversation.turns] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]
    example = render_openai(conversation)
    assert [m["role"] for m in example["messages"]] == [
        "system", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert example["messages"][3]["content"] == f"{NO_OBSERVATION}\n\nCount again."
    for render, problems in RENDERINGS:
        assert problems(render(conversation)) == []
