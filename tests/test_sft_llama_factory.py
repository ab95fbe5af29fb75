"""The consumer validators hold LLaMA-Factory's loader rules, checked on its own demo data and on
the cases its converters skip as abnormal."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from conftest import SHARED_DATA

from bigaction_assets.sft.llama_factory import openai_rules, sharegpt_rules
from bigaction_assets.sft.validate import openai_problems, sharegpt_problems

LLAMA_FACTORY = SHARED_DATA / "llama_factory"
CALL = '{"name": "click", "arguments": {"bid": "93"}}'


def sharegpt(*roles: str, **extra: Any) -> dict[str, Any]:
    values = {"function_call": CALL}
    entries = [{"from": role, "value": values.get(role, "text")} for role in roles]
    return {"conversations": entries, "tools": "[]", **extra}


@pytest.mark.skipif(not LLAMA_FACTORY.exists(), reason=f"{LLAMA_FACTORY} is absent (../shared)")
def test_llama_factorys_own_demo_data_passes():
    tool_calls = orjson.loads((LLAMA_FACTORY / "glaive_toolcall_en_demo.head20.json").read_bytes())
    assert all(
        sharegpt_rules(example, thought_words=("<think>", "</think>")) == []
        for example in tool_calls
    )
    pairs = orjson.loads((LLAMA_FACTORY / "dpo_en_demo.head20.json").read_bytes())
    assert all(sharegpt_rules(example, ranking=True) == [] for example in pairs)
    # its ranking data read as plain SFT: one message, an odd count, is skipped
    assert all(sharegpt_rules(example) for example in pairs)


@pytest.mark.parametrize(
    ("roles", "problem"),
    [
        (("human", "gpt"), None),
        (("system", "human", "function_call", "observation", "gpt"), None),  # system taken out
        (("human", "function_call", "observation", "function_call"), None),
        (("human", "human", "gpt", "gpt"), "message 1: 'human'"),
        (("gpt", "human"), "message 0: 'gpt'"),
        (("human", "function_call", "human", "gpt"), None),  # either user-side tag
        (("human", "function_call", "observation"), "3 messages"),  # ends on a result
        (("human",), "1 messages"),
        ((), "no messages"),
        (("human", "assistant"), "message 1: 'assistant'"),  # not our tags
    ],
)
def test_sharegpt_alignment(roles, problem):
    problems = sharegpt_rules(sharegpt(*roles))
    assert (problems == []) if problem is None else (problem in problems[0]), problems


def test_ranking_data_as_its_loader_expects():
    chosen, rejected = {"from": "gpt", "value": "a"}, {"from": "function_call", "value": CALL}
    pair = sharegpt("human", chosen=chosen, rejected=rejected)
    assert sharegpt_rules(pair, ranking=True) == []
    assert "even count" in sharegpt_rules(pair)[0]
    longer = sharegpt("human", "gpt", chosen=chosen, rejected=rejected)
    assert "odd count" in sharegpt_rules(longer, ranking=True)[0]
    wrong = sharegpt("human", chosen={"from": "human", "value": "a"}, rejected=rejected)
    assert sharegpt_rules(wrong, ranking=True) == ["chosen is not a message of the assistant side"]
    missing = sharegpt("human", chosen=chosen)
    assert sharegpt_rules(missing, ranking=True) == [
        "rejected is not a message of the assistant side"
    ]


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        (CALL, True),
        (f"<think>\nThe Buy button.\n</think>\n\n{CALL}", True),
        (f"[{CALL}, {CALL}]", True),
        (f"<think>\nnever closed\n{CALL}", False),  # no thought found: not JSON
        (f"<think>\nx\n</think>\n\n{CALL} and more", False),
        (f"Thought first {CALL}", False),  # a thought outside the words is not read
        ('{"name": "click"}', False),
    ],
)
def test_function_call_values_as_its_formatter_reads_them(value, valid):
    example = {
        "conversations": [
            {"from": "human", "value": "go"},
            {"from": "function_call", "value": value},
        ]
    }
    assert (sharegpt_rules(example) == []) is valid


def test_older_thought_words_read_the_same_value():
    value = f"<think>\nThe Buy button.\n</think>\n\n{CALL}"
    example = {
        "conversations": [
            {"from": "human", "value": "go"},
            {"from": "function_call", "value": value},
        ]
    }
    assert sharegpt_problems(example, thought_words=("<think>", "</think>")) == []


def message(role: str, calls: int = 0, call_id: str = "c1") -> dict[str, Any]:
    if role == "assistant" and calls:
        function = {"name": "click", "arguments": json.dumps({"bid": "93"})}
        return {
            "role": role,
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        }
    if role == "tool":
        return {"role": role, "tool_call_id": call_id, "content": "page"}
    return {"role": role, "content": "text"}


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        (
            [
                message("system"),
                message("user"),
                message("assistant", 1),
                message("tool"),
                message("assistant"),
            ],
            None,
        ),
        ([message("user"), message("user"), message("assistant")], "message 1: 'user'"),
        (
            [
                message("user"),
                message("assistant", 1),
                message("tool"),
                message("user"),
                message("assistant"),
            ],
            "message 3: 'user'",
        ),
        ([message("user"), message("assistant"), message("assistant")], "message 2: 'assistant'"),
        # tool results at the very end are dropped: what is left aligns
        ([message("user"), message("assistant", 1), message("tool")], None),
        ([message("user")], "1 messages"),
    ],
)
def test_openai_formatting_as_its_converter_aligns_it(messages, problem):
    problems = openai_rules({"messages": messages, "tools": []})
    assert (problems == []) if problem is None else (problem in problems[0]), problems


def test_consecutive_tool_results_are_one_observation():
    two = {"id": "c2", "type": "function", "function": {"name": "click", "arguments": "{}"}}
    calling = message("assistant", 1)
    calling["tool_calls"].append(two)
    messages = [
        message("user"),
        calling,
        message("tool"),
        message("tool", call_id="c2"),
        message("assistant"),
    ]
    assert openai_rules({"messages": messages}) == []
    assert openai_problems({"messages": [message("system"), *messages], "tools": []}) == []


def test_openai_examples_end_on_the_assistant_and_answer_every_call():
    ends_on_result = [message("system"), message("user"), message("assistant", 1), message("tool")]
    assert openai_problems({"messages": ends_on_result, "tools": []}) == [
        "the last message is not the assistant's: nothing to learn at the end"
    ]
    unanswered = [
        message("system"),
        message("user"),
        message("assistant", 1),
        message("user"),
        message("assistant"),
    ]
    problems = openai_problems({"messages": unanswered, "tools": []})
    assert problems == ["message 3: calls before it are not answered"]  # LLaMA-Factory's fine
    final_call = [message("system"), message("user"), message("assistant", 1)]
    assert openai_problems({"messages": final_call, "tools": []}) == []  # the call is the target
