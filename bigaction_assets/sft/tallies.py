"""Running lengths of a conversation's turns in each SFT format, one tally class per format.

Each tally mirrors its renderer (`openai_format`, `sharegpt_format`, `openhands_format`) turn by
turn: every format makes one message of each run of turns of one side (`side_groups`), texts a
renderer merges are counted by composing their parts (`joined_tokens`), and what a turn
contributes is worked out once per conversation (`turn_facts.TurnFacts`). A change to a
renderer needs the same change here; `tests/test_sft_counting.py` holds the two equal.
"""

from __future__ import annotations

from bigaction_assets.joined_tokens import Facts, joined
from bigaction_assets.sft.lengths import MESSAGE_OVERHEAD
from bigaction_assets.sft.turn_facts import BLANK_LINE, TurnFacts, TurnInfo, gpt_tokens
from bigaction_assets.sft.turns import Turn


class Tally:
    """The running length, in one format, of a conversation whose turns are added one by one.

    Every format makes one message of each run of turns of one side (`side_groups`); a tally
    keeps the run still open apart, so a total costs that run alone. Windows try many endings
    of the same run, each on a copy: a copy is a few fields.
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
    """A message per run: contents joined by a blank line (an assistant's non-empty ones), plus
    the calls of an assistant run or the call id of a result."""

    __slots__ = ("extra", "images", "mine", "result", "text")

    def __init__(self, turns: TurnFacts, fixed: int) -> None:
        super().__init__(turns, fixed)
        self.mine: bool | None = None  # the side of the open message, None before any
        self.text: Facts | None = None
        self.extra = 0
        self.images = 0  # screenshots of the open message
        self.result = False  # whether it answers a call (its images then follow, as a user's)

    def add(self, turn: Turn, info: TurnInfo) -> None:
        mine, shown = turn.role == "assistant", not (turn.role == "assistant" and not turn.content)
        if self.mine is not None and self.mine == mine:
            if shown:
                parts = [info[2]] if self.text is None else [self.text, info[2]]
                self.text = joined(BLANK_LINE, parts)
            if mine:  # a user-side message shows the call id of its first turn only
                self.extra += info[0]
            self.images += len(turn.images)
            return
        self.fixed += self._open()
        self.mine, self.text, self.extra = mine, info[2] if shown else None, info[0]
        self.images, self.result = len(turn.images), turn.role == "tool"

    def _open(self) -> int:
        if self.mine is None:
            return 0
        tokens = MESSAGE_OVERHEAD + (self.text.tokens if self.text is not None else 0) + self.extra
        if self.images:
            tokens += self.images * self.turns.image_tokens
            tokens += MESSAGE_OVERHEAD if self.result else 0  # the user message holding them
        return tokens

    def total(self) -> int:
        return self.fixed + self._open()

    def copy(self) -> Tally:
        twin = OpenaiTally(self.turns, self.fixed)
        twin.mine, twin.text, twin.extra = self.mine, self.text, self.extra
        twin.images, twin.result = self.images, self.result
        return twin


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
    """A value per run: the human side's contents joined, the assistant's calls (after its
    thought in the thought words) or its text."""

    __slots__ = ("assistant", "group", "human", "images", "value")

    def __init__(self, turns: TurnFacts, fixed: int) -> None:
        super().__init__(turns, fixed)
        self.assistant: bool | None = None  # the side of the open group, None before any
        self.group: list[Turn] = []
        self.human: Facts | None = None  # the open human group's value, joined as it grows
        self.images = 0  # placeholders of the open human group, each an image's tokens
        self.value: int | None = None  # the open assistant group's tokens, once counted

    def copy(self) -> Tally:
        twin = SharegptTally(self.turns, self.fixed)
        twin.assistant, twin.group, twin.human = self.assistant, list(self.group), self.human
        twin.value, twin.images = self.value, self.images
        return twin

    def add(self, turn: Turn, info: TurnInfo) -> None:
        assistant = turn.role == "assistant"
        if self.assistant == assistant:
            if assistant:
                self.group.append(turn)
                self.value = None
            else:
                self.human = joined(BLANK_LINE, [self.human, info[2]])
                self.images += len(turn.images)
            return
        self.fixed += self._open_group()
        self.assistant, self.group, self.value = assistant, [turn] if assistant else [], None
        self.human = None if assistant else info[2]
        self.images = len(turn.images)

    def _open_group(self) -> int:
        if self.assistant is None:
            return 0
        if not self.assistant:
            return MESSAGE_OVERHEAD + self.human.tokens + self.images * self.turns.image_tokens
        if self.value is None:
            if len(self.group) == 1:  # the usual run: one turn, its value known from before
                self.value = self.turns.gpt_tokens(self.group[0])
            else:
                self.value = MESSAGE_OVERHEAD + gpt_tokens(self.group, self.turns)
        return self.value

    def total(self) -> int:
        return self.fixed + self._open_group()


TALLIES: dict[str, type[Tally]] = {
    "openai": OpenaiTally,
    "sharegpt": SharegptTally,
    "openhands": OpenhandsTally,
}


def add(tallies: list[Tally], turn: Turn) -> None:
    """Add `turn` to every format's tally (its facts worked out once for all of them)."""
    if tallies:
        info = tallies[0].turns.of(turn)
        for tally in tallies:
            tally.add(turn, info)


def copies(tallies: list[Tally]) -> list[Tally]:
    return [tally.copy() for tally in tallies]
