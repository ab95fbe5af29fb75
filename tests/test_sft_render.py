"""SFT renderers on a hand-built episode and on every bundled sample, checked by the validators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_ingest
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets.sft.conversation import (
    NO_OBSERVATION,
    Conversation,
    ToolCall,
    build_conversation,
)
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import parse_function_blocks, render_openhands
from bigaction_assets.sft.sharegpt_format import (
    dataset_info,
    render_sharegpt,
    tools_json,
)
from bigaction_assets.sft.tools import KNOWN_TOOLS, infer_spec
from bigaction_assets.sft.validate import openai_problems, openhands_problems, sharegpt_problems
from bigaction_assets.sources.adp import ADAPTER as ADP
from bigaction_assets.sources.mind2web import ADAPTER as MIND2WEB

ROOT = Path(__file__).resolve().parents[1]
LANDING = ROOT / "landing"


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
    assert json.loads(example["conversations"][1]["value"]) == {
        "name": "click", "arguments": {"bid": "93"},
    }  # fmt: skip
    assert "Buy a red shirt." in example["conversations"][0]["value"]
    assert isinstance(json.loads(example["tools"]), list)
    assert sharegpt_problems(example) == []
    thought = render_sharegpt(tiny, thought_words=("<think>", "</think>"))
    assert thought["conversations"][1]["value"].startswith("<think>The Buy button is 93.</think>{")
    assert sharegpt_problems(thought, thought_words=("<think>", "</think>")) == []


def test_openhands_tiny(tiny):
    example = render_openhands(tiny)
    assert [e["from"] for e in example["conversations"]] == ["human", "gpt", "human", "gpt"]
    click = example["conversations"][1]["value"]
    assert click.startswith("The Buy button is 93.\n\n<function=click>")
    assert parse_function_blocks(click) == [("click", {"bid": "93"})]
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
        assert openai_problems(render_openai(conversation)) == []
        assert sharegpt_problems(render_sharegpt(conversation)) == []
        assert openhands_problems(render_openhands(conversation)) == []


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
