"""Exact lengths of a conversation in every SFT format, counted from its turns, not renderings.

`lengths` counts a rendered example text by text, as a chat model sees it. Windowing needs that
count for many runs of the same turns; rendering each run and counting its merged texts again
would redo the same work every time. A tally per format (`tallies`) gives the same numbers (a
test holds them equal on every bundled sample and on generated conversations) by mirroring its
renderer turn by turn, and a run of turns is counted by adding its turns one at a time, so
trying a window one step longer costs that step alone. The test, and the
`examples_fit_context` check that counts the stored text, catch a renderer change that the
tallies miss.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from bigaction_assets.joined_tokens import facts
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.images import IMAGE_TOKENS
from bigaction_assets.sft.lengths import MESSAGE_OVERHEAD, REPLY_OVERHEAD
from bigaction_assets.sft.openhands_format import system_text
from bigaction_assets.sft.sharegpt_format import tools_json
from bigaction_assets.sft.tallies import TALLIES, Tally, add
from bigaction_assets.sft.turn_facts import TurnFacts
from bigaction_assets.sft.turns import Conversation, Turn
from bigaction_assets.tokens import count_tokens


class LengthCounter:
    """Lengths of runs of one conversation's turns (its windows), in the chosen formats."""

    def __init__(
        self,
        conv: Conversation,
        formats: Sequence[str] = SFT_FORMATS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        self.formats = tuple(formats)
        self.turns = TurnFacts(image_tokens)
        fixed = {
            "openai": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD + facts(conv.system).tokens
            + _openai_tools_tokens(conv),
            "sharegpt": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD + facts(conv.system).tokens
            + count_tokens(tools_json(conv)),
            "openhands": lambda: REPLY_OVERHEAD + MESSAGE_OVERHEAD
            + facts(system_text(conv)).tokens,
        }  # fmt: skip
        self.fixed = {name: fixed[name]() for name in self.formats}

    def start(self, turns: Iterable[Turn] = ()) -> list[Tally]:
        """A tally per format, with `turns` added."""
        tallies = [TALLIES[name](self.turns, self.fixed[name]) for name in self.formats]
        for turn in turns:
            add(tallies, turn)
        return tallies

    def total(self, tallies: list[Tally]) -> int:
        """The longest of the formats' totals: what a window must keep within the context."""
        return max(tally.total() for tally in tallies)

    def length(self, name: str, turns: Sequence[Turn]) -> int:
        """Tokens of a conversation with these turns rendered as `name`."""
        tally = TALLIES[name](self.turns, self.fixed[name])
        for turn in turns:
            tally.add(turn, self.turns.of(turn))
        return tally.total()

    def __call__(self, turns: Sequence[Turn]) -> int:
        """The longest of the formats, as `conversation_tokens`."""
        return self.total(self.start(turns))


_tools_tokens: dict[tuple[str, ...], int] = {}


def _openai_tools_tokens(conv: Conversation) -> int:
    """Tokens of the tools' JSON schemas as the openai format lists them, once per tool set."""
    if not conv.tools:
        return 0
    key = tuple(spec.function_json for spec in conv.tools)
    known = _tools_tokens.get(key)
    if known is None:
        if len(_tools_tokens) > 4_096:
            _tools_tokens.clear()
        tools = [spec.as_openai_tool() for spec in conv.tools]
        known = _tools_tokens[key] = count_tokens(orjson.dumps(tools).decode())
    return known


def format_length(name: str, conv: Conversation, image_tokens: int = IMAGE_TOKENS) -> int:
    """Tokens of the conversation rendered as `name`, as `lengths` counts them."""
    return LengthCounter(conv, (name,), image_tokens).length(name, conv.turns)


def conversation_tokens(
    conv: Conversation, formats: Sequence[str] = SFT_FORMATS, image_tokens: int = IMAGE_TOKENS
) -> int:
    """cl100k_base tokens of the longest of its renderings in `formats`, as `lengths` counts."""
    return LengthCounter(conv, formats, image_tokens)(conv.turns)


FORMAT_LENGTHS = {name: (lambda conv, name=name: format_length(name, conv)) for name in SFT_FORMATS}
