"""Exact lengths of a conversation in every SFT format, counted from its turns, not renderings.

`lengths` counts a rendered example text by text, as a chat model sees it. Windowing needs that
count for many runs of the same turns; rendering each run and counting its merged texts again
would redo the same work every time. A `Tally` per format gives the same numbers (a test holds
them equal on every bundled sample and on generated conversations) by mirroring its renderer
turn by turn: what a turn contributes is worked out once per conversation, texts a renderer
merges are counted by composing their parts (`joined_tokens`), and a run of turns is counted by
adding its turns one at a time, so trying a window one step longer costs that step alone. A
change to a renderer needs the same change here; the test, and the `examples_fit_context`
check that counts the stored text, catch one that is missed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import orjson

from bigaction_assets.joined_tokens import Facts, facts, joined
from bigaction_assets.sft.conversation import Conversation, Turn
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.lengths import CALL_OVERHEAD, MESSAGE_OVERHEAD, REPLY_OVERHEAD
from bigaction_assets.sft.openhands_format import function_block, result_header, system_text
from bigaction_assets.sft.sharegpt_format import MISSING_USER_TURN, tools_json
from bigaction_assets.tokens import count_tokens

BLANK_LINE = "\n\n"


class TurnFacts:
    """What each turn of one conversation contributes to each format, worked out once.

    Turns are remembered by identity: windows of a conversation share its turn objects.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[Turn, int, Facts, Facts]] = {}

    def of(self, turn: Turn) -> tuple[int, Facts, Facts]:
        """(its openai message's tokens, its openhands value, its content)."""
        known = self._known.get(id(turn))
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
            known = self._known[id(turn)] = (turn, message, value, content)
        return known[1], known[2], known[3]


TurnInfo = tuple[int, Facts, Facts]  # TurnFacts.of: openai tokens, openhands value, content


class Tally:
    """The running length, in one format, of a conversation whose turns are added one by one.

    Windows try many endings of the same run, each on a copy: a copy is a few fields.
    """

    __slots__ = ("fixed", "turns")

    def __init__(self, turns: TurnFacts, fixed: int) -> None:
        self.turns = turns
        self.fixed = fixed

    def add(self, turn: Turn, info: TurnInfo) -> None:
        raise NotImplementedError

    def total(self) -> int:
        """Tokens of the conversation with the turns added so far, rendered in this format."""
        raise NotImplementedError

    def copy(self) -> Tally:
        raise NotImplementedError


class OpenaiTally(Tally):
    """Every turn is a message of its own."""

    __slots__ = ()

    def add(self, turn: Turn, info: TurnInfo) -> None:
        self.fixed += info[0]

    def total(self) -> int:
        return self.fixed

    def copy(self) -> Tally:
        return OpenaiTally(self.turns, self.fixed)


class OpenhandsTally(Tally):
    """Consecutive turns of one side (the assistant's, or the human's) merge into one value."""

    __slots__ = ("mine", "open")

    def __init__(self, turns: TurnFacts, fixed: int) -> None:
        super().__init__(turns, fixed)
        self.mine: bool | None = None  # the side of the open entry, None before any
        self.open: Facts | None = None

    def add(self, turn: Turn, info: TurnInfo) -> None:
        mine, value = turn.role == "assistant", info[1]
        if self.open is not None and self.mine == mine:
            self.open = joined(BLANK_LINE, [self.open, value])
            return
        if self.open is not None:
            self.fixed += MESSAGE_OVERHEAD + self.open.tokens
        self.mine, self.open = mine, value

    def total(self) -> int:
        return self.fixed + (MESSAGE_OVERHEAD + self.open.tokens if self.open is not None else 0)

    def copy(self) -> Tally:
        twin = OpenhandsTally(self.turns, self.fixed)
        twin.mine, twin.open = self.mine, self.open
        return twin


class SharegptTally(Tally):
    """Turns grouped by side; a conversation that opens with the assistant gets a stand-in user
    turn, and one that ends on the human side loses that group (LLaMA-Factory drops it)."""

    __slots__ = ("assistant", "group", "human")

    def __init__(self, turns: TurnFacts, fixed: int) -> None:
        super().__init__(turns, fixed)
        self.assistant: bool | None = None  # the side of the open group, None before any
        self.group: list[Turn] = []
        self.human: Facts | None = None  # the open human group's value, joined as it grows

    def copy(self) -> Tally:
        twin = SharegptTally(self.turns, self.fixed)
        twin.assistant, twin.group, twin.human = self.assistant, list(self.group), self.human
        return twin

    def add(self, turn: Turn, info: TurnInfo) -> None:
        assistant = turn.role == "assistant"
        if self.assistant is None and assistant:
            self.fixed += MESSAGE_OVERHEAD + count_tokens(MISSING_USER_TURN)
        if self.assistant == assistant:
            self.group.append(turn)
            if not assistant:
                self.human = joined(BLANK_LINE, [self.human, info[2]])
            return
        self.fixed += self._open_group()
        self.assistant, self.group = assistant, [turn]
        self.human = None if assistant else info[2]

    def _open_group(self) -> int:
        if not self.group:
            return 0
        if not self.assistant:
            return MESSAGE_OVERHEAD + self.human.tokens
        payload = [call.call_json for turn in self.group for call in turn.tool_calls]
        if payload:
            value = facts(payload[0] if len(payload) == 1 else f"[{', '.join(payload)}]")
        else:
            value = joined(BLANK_LINE, [self.turns.of(t)[2] for t in self.group if t.content])
        return MESSAGE_OVERHEAD + value.tokens

    def total(self) -> int:
        return self.fixed + (self._open_group() if self.assistant else 0)


TALLIES: dict[str, type[Tally]] = {
    "openai": OpenaiTally,
    "sharegpt": SharegptTally,
    "openhands": OpenhandsTally,
}


class LengthCounter:
    """Lengths of runs of one conversation's turns (its windows), in the chosen formats."""

    def __init__(self, conv: Conversation, formats: Sequence[str] = SFT_FORMATS) -> None:
        self.formats = tuple(formats)
        self.turns = TurnFacts()
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


def add(tallies: list[Tally], turn: Turn) -> None:
    """Add `turn` to every format's tally (its facts worked out once for all of them)."""
    if tallies:
        info = tallies[0].turns.of(turn)
        for tally in tallies:
            tally.add(turn, info)


def copies(tallies: list[Tally]) -> list[Tally]:
    return [tally.copy() for tally in tallies]


def format_length(name: str, conv: Conversation) -> int:
    """Tokens of the conversation rendered as `name`, as `lengths` counts them."""
    return LengthCounter(conv, (name,)).length(name, conv.turns)


def conversation_tokens(conv: Conversation, formats: Sequence[str] = SFT_FORMATS) -> int:
    """cl100k_base tokens of the longest of its renderings in `formats`, as `lengths` counts."""
    return LengthCounter(conv, formats)(conv.turns)


FORMAT_LENGTHS = {name: (lambda conv, name=name: format_length(name, conv)) for name in SFT_FORMATS}
