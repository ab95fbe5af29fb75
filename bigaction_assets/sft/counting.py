"""Exact lengths of a conversation in every SFT format, counted from its turns, not renderings.

`lengths` counts a rendered example text by text, as a chat model sees it. Windowing needs that
count for many runs of the same turns; rendering each run and counting its merged texts again
would redo the same work every time. `LengthCounter` gives the same numbers (a test holds them
equal on every bundled sample and on generated conversations) by mirroring each renderer: what
a turn contributes is worked out once, what depends on the conversation (tool schemas, system
prompt) once, and texts a renderer merges are counted by composing their parts
(`joined_tokens`). A change to a renderer needs the same change here; the test, and the
`examples_fit_context` check that counts the stored text, catch one that is missed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import orjson

from bigaction_assets.joined_tokens import Facts, facts, joined
from bigaction_assets.sft.conversation import Conversation, Turn
from bigaction_assets.sft.lengths import CALL_OVERHEAD, MESSAGE_OVERHEAD, REPLY_OVERHEAD
from bigaction_assets.sft.openhands_format import function_block, result_header, system_text
from bigaction_assets.sft.sharegpt_format import (
    MISSING_USER_TURN,
    _group_by_side,
    function_call_json,
    tools_json,
)
from bigaction_assets.tokens import count_tokens

BLANK_LINE = "\n\n"


class LengthCounter:
    """Lengths of runs of one conversation's turns (its windows), in each format.

    Turns are remembered by identity: windows of a conversation share its turn objects.
    """

    def __init__(self, conv: Conversation) -> None:
        tools = [spec.as_openai_tool() for spec in conv.tools]
        system = MESSAGE_OVERHEAD + facts(conv.system).tokens
        tool_json = count_tokens(orjson.dumps(tools).decode()) if tools else 0
        self.fixed = {
            "openai": REPLY_OVERHEAD + tool_json + system,
            "sharegpt": REPLY_OVERHEAD + system + count_tokens(tools_json(conv)),
            "openhands": REPLY_OVERHEAD + MESSAGE_OVERHEAD + facts(system_text(conv)).tokens,
        }
        self._turns: dict[int, tuple[Turn, int, Facts]] = {}

    def _turn(self, turn: Turn) -> tuple[int, Facts]:
        """(its openai message's tokens, its openhands value), worked out once."""
        known = self._turns.get(id(turn))
        if known is None or known[0] is not turn:
            content = facts(turn.content)
            message = MESSAGE_OVERHEAD + content.tokens
            if turn.role == "assistant":
                for call in turn.tool_calls:
                    message += CALL_OVERHEAD + count_tokens(call.id) + count_tokens(call.name)
                    message += facts(call.arguments_json).tokens
                blocks = [facts(function_block(call)) for call in turn.tool_calls]
                value = joined(BLANK_LINE, ([content] if turn.content else []) + blocks)
            elif turn.role == "tool":
                message += count_tokens(turn.tool_call_id) if turn.tool_call_id else 0
                value = joined("\n", [facts(result_header(turn)), content])
            else:
                value = content
            known = self._turns[id(turn)] = (turn, message, value)
        return known[1], known[2]

    def openai(self, turns: Sequence[Turn]) -> int:
        """`lengths.openai_tokens(render_openai(...))` of a conversation with these turns."""
        return self.fixed["openai"] + sum(self._turn(turn)[0] for turn in turns)

    def sharegpt(self, turns: Sequence[Turn]) -> int:
        """`lengths.sharegpt_tokens(render_sharegpt(...))` (calls without thought words)."""
        total = self.fixed["sharegpt"]
        groups = _group_by_side(list(turns))
        if groups and groups[0][0].role == "assistant":
            total += MESSAGE_OVERHEAD + count_tokens(MISSING_USER_TURN)
        if groups and groups[-1][0].role != "assistant":
            groups.pop()
        for group in groups:
            if group[0].role != "assistant":
                value = joined(BLANK_LINE, [facts(turn.content) for turn in group])
            elif any(turn.tool_calls for turn in group):
                payload = [function_call_json(call) for turn in group for call in turn.tool_calls]
                value = facts(payload[0] if len(payload) == 1 else f"[{', '.join(payload)}]")
            else:
                value = joined(BLANK_LINE, [facts(turn.content) for turn in group if turn.content])
            total += MESSAGE_OVERHEAD + value.tokens
        return total

    def openhands(self, turns: Sequence[Turn]) -> int:
        """`lengths.openhands_tokens(render_openhands(...))`."""
        entries: list[tuple[bool, Facts]] = []  # (from the assistant, value)
        for turn in turns:
            mine, value = turn.role == "assistant", self._turn(turn)[1]
            if entries and entries[-1][0] == mine:
                entries[-1] = (mine, joined(BLANK_LINE, [entries[-1][1], value]))
            else:
                entries.append((mine, value))
        return self.fixed["openhands"] + sum(MESSAGE_OVERHEAD + v.tokens for _, v in entries)

    def __call__(self, turns: Sequence[Turn]) -> int:
        """The longest of the three formats, as `conversation_tokens`."""
        return max(self.openai(turns), self.sharegpt(turns), self.openhands(turns))


def _one_format(name: str) -> Callable[[Conversation], int]:
    def length(conv: Conversation) -> int:
        return getattr(LengthCounter(conv), name)(conv.turns)

    length.__doc__ = f"Tokens of the conversation rendered as {name}, as `lengths` counts them."
    return length


FORMAT_LENGTHS = {name: _one_format(name) for name in ("openai", "sharegpt", "openhands")}


def conversation_tokens(conv: Conversation) -> int:
    """cl100k_base tokens of the longest of the three renderings, as `lengths` counts them."""
    return LengthCounter(conv)(conv.turns)
