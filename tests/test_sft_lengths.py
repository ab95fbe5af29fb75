"""Example lengths as a chat model sees them: every shown text once, plus framing per message."""

from __future__ import annotations

import hashlib

import orjson

from bigaction_assets.sft.lengths import (
    CALL_OVERHEAD,
    MESSAGE_OVERHEAD,
    REPLY_OVERHEAD,
    example_tokens,
    length_problem,
    openai_tokens,
    openhands_tokens,
    sharegpt_tokens,
    should_recount,
)
from bigaction_assets.sft.validate import parsed_renderings
from bigaction_assets.tokens import count_tokens_uncached as tokens

TOOLS = [{"type": "function", "function": {"name": "click", "description": "Click."}}]
OPENAI = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Open the page."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "click", "arguments": '{"bid": "12"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Done."},
    ],
    "tools": TOOLS,
}
SHAREGPT = {
    "conversations": [
        {"from": "human", "value": "Open the page."},
        {"from": "function_call", "value": '{"name": "click", "arguments": {"bid": "12"}}'},
    ],
    "system": "Be brief.",
    "tools": '[{"name": "click"}]',
}
OPENHANDS = {
    "id": "x",
    "system": "Be brief.",
    "conversations": [{"from": "human", "value": "Open the page."}],
}


def test_openai_counts_contents_calls_results_and_tool_schemas():
    expected = (
        REPLY_OVERHEAD
        + tokens(orjson.dumps(TOOLS).decode())
        + 4 * MESSAGE_OVERHEAD
        + tokens("Be brief.")
        + tokens("Open the page.")
        + CALL_OVERHEAD
        + tokens("call_1")
        + tokens("click")
        + tokens('{"bid": "12"}')
        + tokens("call_1")
        + tokens("Done.")
    )
    assert openai_tokens(OPENAI) == expected


def test_sharegpt_counts_system_tools_and_values():
    expected = (
        REPLY_OVERHEAD
        + 3 * MESSAGE_OVERHEAD
        + tokens("Be brief.")
        + tokens('[{"name": "click"}]')
        + tokens("Open the page.")
        + tokens('{"name": "click", "arguments": {"bid": "12"}}')
    )
    assert sharegpt_tokens(SHAREGPT) == expected


def test_openhands_counts_system_and_values():
    expected = (
        REPLY_OVERHEAD + 2 * MESSAGE_OVERHEAD + tokens("Be brief.") + tokens("Open the page.")
    )
    assert openhands_tokens(OPENHANDS) == expected


def test_an_example_is_as_long_as_its_longest_format():
    renderings = {"openai": OPENAI, "sharegpt": SHAREGPT, "openhands": OPENHANDS}
    assert example_tokens(renderings) == openai_tokens(OPENAI)


def row(tokens_stored: int, context: int) -> dict:
    return {
        "tokens": tokens_stored,
        "context_tokens": context,
        "openai": orjson.dumps(OPENAI).decode(),
        "openhands": orjson.dumps(OPENHANDS).decode(),
    }


def test_length_problem_finds_overruns_and_miscounts():
    formats = ("openai", "openhands")
    right = openai_tokens(OPENAI)

    def problem(stored: dict) -> str | None:
        return length_problem(stored, parsed_renderings({k: stored[k] for k in formats}))

    assert problem(row(right, right)) is None
    assert "over its context" in problem(row(right, right - 1))
    assert "stored" in problem(row(right - 5, 10_000))


def test_checks_recount_small_partitions_whole_and_sample_large_ones():
    shas = [hashlib.sha256(str(n).encode()).hexdigest() for n in range(10_000)]
    assert all(should_recount(position, sha) for position, sha in enumerate(shas[:500]))
    sampled = sum(should_recount(500 + k, sha) for k, sha in enumerate(shas[500:]))
    assert 0.03 < sampled / 9_500 < 0.1
