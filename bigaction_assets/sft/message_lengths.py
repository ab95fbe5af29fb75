"""Exact lengths of one message in each SFT format, a message being a run of turns of one side.

Every format makes one message of each run of consecutive turns of one side (`side_groups`),
so a conversation's length in a format is its frame (system prompt, tools) plus the sum of its
messages' lengths. Each function below mirrors its renderer (`openai_format`, `sharegpt_format`,
`openhands_format`) for one run: texts the renderer merges are counted by composing their parts
(`joined_tokens`), and what a turn contributes is worked out once per conversation
(`turn_facts.TurnFacts`). A change to a renderer needs the same change here;
`tests/test_sft_counting.py` holds the two equal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bigaction_assets.joined_tokens import joined
from bigaction_assets.sft.lengths import MESSAGE_OVERHEAD
from bigaction_assets.sft.turn_facts import BLANK_LINE, TurnFacts, gpt_tokens
from bigaction_assets.sft.turns import Turn

Run = Sequence[Turn]


def openai_length(run: Run, turns: TurnFacts) -> int:
    """An assistant run: its non-empty texts joined, and its calls; a user-side run: its texts
    joined, the call id of its first turn, and its screenshots (after a tool result, in a user
    message of their own)."""
    first = run[0]
    if first.role == "assistant":
        if len(run) == 1:
            extra, _, content = turns.of(first)
            return MESSAGE_OVERHEAD + (content.tokens if first.content else 0) + extra
        infos = [turns.of(turn) for turn in run]
        texts = [info[2] for info, turn in zip(infos, run, strict=True) if turn.content]
        return MESSAGE_OVERHEAD + joined(BLANK_LINE, texts).tokens + sum(i[0] for i in infos)
    extra, _, content = turns.of(first)
    tokens = MESSAGE_OVERHEAD + extra
    if len(run) == 1:
        tokens += content.tokens
        images = len(first.images)
    else:
        tokens += joined(BLANK_LINE, [turns.of(turn)[2] for turn in run]).tokens
        images = sum(len(turn.images) for turn in run)
    if images:
        tokens += images * turns.image_tokens
        tokens += MESSAGE_OVERHEAD if first.role == "tool" else 0  # the user message holding them
    return tokens


def sharegpt_length(run: Run, turns: TurnFacts) -> int:
    """An assistant run: its calls after its thought, or its text; a user-side run: its texts
    joined, each screenshot at its cost."""
    first = run[0]
    if first.role == "assistant":
        if len(run) == 1:  # the usual run: one turn, its value known from before
            return turns.gpt_tokens(first)
        return MESSAGE_OVERHEAD + gpt_tokens(list(run), turns)
    if len(run) == 1:
        return MESSAGE_OVERHEAD + turns.of(first)[2].tokens + len(first.images) * turns.image_tokens
    text = joined(BLANK_LINE, [turns.of(turn)[2] for turn in run])
    images = sum(len(turn.images) for turn in run)
    return MESSAGE_OVERHEAD + text.tokens + images * turns.image_tokens


def openhands_length(run: Run, turns: TurnFacts) -> int:
    """The turns' values (calls as blocks, results under their header, a line per screenshot)
    joined by a blank line."""
    if len(run) == 1:
        return MESSAGE_OVERHEAD + turns.of(run[0])[1].tokens
    return MESSAGE_OVERHEAD + joined(BLANK_LINE, [turns.of(turn)[1] for turn in run]).tokens


MESSAGE_LENGTHS: dict[str, Callable[[Run, TurnFacts], int]] = {
    "openai": openai_length,
    "sharegpt": sharegpt_length,
    "openhands": openhands_length,
}
