"""Exact lengths of a conversation in every SFT format, counted from its turns, not renderings.

`lengths` counts a rendered example text by text, as a chat model sees it. Windowing needs that
count for many runs of the same turns; rendering each run and counting its merged texts again
would redo the same work every time. Every format makes one message of each run of turns of one
side, so a conversation's length is its frame plus its messages' lengths (`message_lengths`),
each worked out from facts of its turns made once per conversation; a window one step longer
costs that step's messages alone. A test holds these counts equal to the rendered ones on every
bundled sample and on generated conversations, and the `examples_fit_context` check, which
counts the stored text, catches a renderer change that they miss.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson

from bigaction_assets.joined_tokens import facts
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.images import IMAGE_TOKENS
from bigaction_assets.sft.lengths import MESSAGE_OVERHEAD, REPLY_OVERHEAD
from bigaction_assets.sft.message_lengths import MESSAGE_LENGTHS, Run
from bigaction_assets.sft.openhands_format import system_text
from bigaction_assets.sft.sharegpt_format import tools_json
from bigaction_assets.sft.tools import once_per_tool_set, openai_tools, tool_set_key
from bigaction_assets.sft.turn_facts import TurnFacts
from bigaction_assets.sft.turns import Conversation, Turn, side_groups
from bigaction_assets.tokens import count_tokens


class LengthCounter:
    """Lengths of runs of one conversation's turns (its windows), in the chosen formats.

    Lengths come as lists with one number per format, in the order of `formats`.
    """

    def __init__(
        self,
        conv: Conversation,
        formats: Sequence[str] = SFT_FORMATS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        self.formats = tuple(formats)
        self.turns = TurnFacts(image_tokens)
        frames = {
            "openai": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD + facts(conv.system).tokens
            + _openai_tools_tokens(conv),
            "sharegpt": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD + facts(conv.system).tokens
            + count_tokens(tools_json(conv)),
            "openhands": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD
            + facts(system_text(conv)).tokens,
        }  # fmt: skip
        self.frame = [frames[name]() for name in self.formats]
        """What every example takes before its messages: the reply's start, the system
        message and the tools."""
        self._lengths = [MESSAGE_LENGTHS[name] for name in self.formats]

    def message(self, run: Run) -> list[int]:
        """The lengths of one message: a run of turns of one side."""
        return [length(run, self.turns) for length in self._lengths]

    def lengths(self, turns: Sequence[Turn]) -> list[int]:
        """The lengths of a conversation with these turns."""
        totals = list(self.frame)
        for run in side_groups(turns):
            totals = [total + part for total, part in zip(totals, self.message(run), strict=True)]
        return totals

    def total(self, lengths: Sequence[int]) -> int:
        """The longest format's length: what a window must keep within the context."""
        return max(lengths)

    def length(self, name: str, turns: Sequence[Turn]) -> int:
        """Tokens of a conversation with these turns rendered as `name`."""
        return self.lengths(turns)[self.formats.index(name)]

    def __call__(self, turns: Sequence[Turn]) -> int:
        """The longest of the formats, as `conversation_tokens`."""
        return self.total(self.lengths(turns))


_tools_tokens: dict[tuple[str, ...], int] = {}


def _openai_tools_tokens(conv: Conversation) -> int:
    """Tokens of the tools' JSON schemas as the openai format lists them, once per tool set."""
    if not conv.tools:
        return 0
    tools = conv.tools
    return once_per_tool_set(
        _tools_tokens,
        tool_set_key(tools),
        lambda: count_tokens(orjson.dumps(openai_tools(tools)).decode()),
    )


def format_length(name: str, conv: Conversation, image_tokens: int = IMAGE_TOKENS) -> int:
    """Tokens of the conversation rendered as `name`, as `lengths` counts them."""
    return LengthCounter(conv, (name,), image_tokens).length(name, conv.turns)


def conversation_tokens(
    conv: Conversation, formats: Sequence[str] = SFT_FORMATS, image_tokens: int = IMAGE_TOKENS
) -> int:
    """cl100k_base tokens of the longest of its renderings in `formats`, as `lengths` counts."""
    return LengthCounter(conv, formats, image_tokens)(conv.turns)


FORMAT_LENGTHS = {name: (lambda conv, name=name: format_length(name, conv)) for name in SFT_FORMATS}
