"""Long episodes cut into self-contained windows of whole steps that each fit a context length."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bigaction_assets.joined_tokens import facts
from bigaction_assets.sft.conversation import Conversation, Turn
from bigaction_assets.sft.counting import LengthCounter, Tally, add, copies
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.observations import fit_to_tokens

OBSERVATION_ROLES = ("user", "tool")


@dataclass(frozen=True)
class _Step:
    """The turns before an assistant turn (answers to the previous call first), and the turn."""

    before: list[Turn]
    action: Turn


Parts = tuple[Turn | None, list[_Step], list[Turn]]


def _parts(turns: list[Turn]) -> Parts:
    """(the first user turn, the steps after it, the turns after the last assistant turn)."""
    head = turns[0] if turns and turns[0].role == "user" else None
    steps: list[_Step] = []
    before: list[Turn] = []
    for turn in turns[1 if head else 0 :]:
        if turn.role == "assistant":
            steps.append(_Step(before, turn))
            before = []
        else:
            before.append(turn)
    return head, steps, before


def _answers(before: list[Turn], action: Turn) -> list[Turn]:
    """The tool results at the start of `before` that answer `action`'s calls."""
    ids = {call.id for call in action.tool_calls}
    answers = []
    for turn in before:
        if turn.role != "tool" or turn.tool_call_id not in ids:
            break
        answers.append(turn)
    return answers


def _detached(before: list[Turn]) -> list[Turn]:
    """Results of a call made in an earlier window, shown as what the user sees instead."""
    return [Turn("user", turn.content) if turn.role == "tool" else turn for turn in before]


def _window(conv: Conversation, parts: Parts, first: int, last: int) -> Conversation:
    """Head, steps `first..last` and what answers the last call (or the tail, at the end)."""
    head, steps, tail = parts
    turns = [head] if head else []
    for k in range(first, last + 1):
        before = _detached(steps[k].before) if k == first and first > 0 else steps[k].before
        turns += [*before, steps[k].action]
    if last == len(steps) - 1:
        turns += tail
    else:
        turns += _answers(steps[last + 1].before, steps[last].action)
    return replace(conv, turns=turns)


def _cut_to_fit(
    conv: Conversation, max_tokens: int, protected: int, count: LengthCounter
) -> Conversation:
    """Shorten the longest observation turn (never the first `protected` turns) until it fits."""
    turns = list(conv.turns)
    tokens = count(turns)
    while tokens > max_tokens:
        sizes = [
            (facts(turn.content).tokens, position)  # the longest; of equals, the last
            for position, turn in enumerate(turns)
            if position >= protected and turn.role in OBSERVATION_ROLES
        ]
        size, position = max(sizes, default=(0, 0))
        if size == 0:
            raise ValueError(
                f"episode {conv.episode_id}: a step needs {tokens} tokens with every observation "
                f"emptied, more than max_tokens={max_tokens}; its action alone is too long"
            )
        target = min(size - (tokens - max_tokens), size - 1)  # strictly shorter: it terminates
        cut = turns[position]
        turns[position] = replace(cut, content=fit_to_tokens(cut.content, target))
        conv = replace(conv, turns=list(turns))
        tokens = count(turns)
    return replace(conv, tokens=tokens)


def split_into_windows(
    conv: Conversation, max_tokens: int, formats: Sequence[str] = SFT_FORMATS
) -> list[Conversation]:
    """Windows of whole steps, each within `max_tokens` by `conversation_tokens` in `formats`.

    Every window starts with the first user turn (the task) so it stands alone. A step is the
    observation turns before an assistant turn plus that turn; a window ends with the results
    answering its last call, and the next window shows those results as a user turn (their
    call is not in it). Each window holds the longest run of steps that fits: steps are added
    one at a time to a running count per format (`counting.Tally`), and each longer run is
    tried by adding only what ends it, so an episode is counted in one pass. A step too long
    even alone has its longest observations cut until it fits. A short episode comes back as
    one window equal to the input.

    Raises:
        ValueError: the system prompt, tools and task alone exceed `max_tokens`, or a step's
            action is too long to fit even with its observations emptied.
    """
    parts = _parts(conv.turns)
    head, steps, tail = parts
    protected = 1 if head else 0
    count = LengthCounter(conv, formats)
    opening = count.start([head] if head else [])
    base = count.total(opening)
    if base > max_tokens:
        raise ValueError(
            f"episode {conv.episode_id}: the system prompt, tools and task take {base} tokens, "
            f"more than max_tokens={max_tokens}; raise max_tokens or shorten the first user turn"
        )
    if not steps:
        whole = count(conv.turns)
        if whole <= max_tokens:
            return [replace(conv, turns=list(conv.turns), window=0, windows=1, tokens=whole)]
        return [_cut_to_fit(replace(conv, turns=list(conv.turns)), max_tokens, protected, count)]

    def ending(last: int) -> list[Turn]:
        """What closes a window whose last step is `last`."""
        return (
            tail if last == len(steps) - 1 else _answers(steps[last + 1].before, steps[last].action)
        )

    def tried(running: list[Tally], last: int) -> int:
        """Tokens of the window of the steps added to `running`, `last` the last of them."""
        closed = copies(running)
        for turn in ending(last):
            add(closed, turn)
        return count.total(closed)

    windows: list[Conversation] = []
    first, final = 0, len(steps) - 1
    while first <= final:
        running = copies(opening)
        before = _detached(steps[first].before) if first > 0 else steps[first].before
        for turn in [*before, steps[first].action]:
            add(running, turn)
        tokens = tried(running, first)
        if tokens > max_tokens:
            window = _window(conv, parts, first, first)
            windows.append(_cut_to_fit(window, max_tokens, protected, count))
            first += 1
            continue
        last = first
        while last < final:
            for turn in [*steps[last + 1].before, steps[last + 1].action]:
                add(running, turn)
            longer = tried(running, last + 1)
            if longer > max_tokens:
                break
            last, tokens = last + 1, longer
        windows.append(replace(_window(conv, parts, first, last), tokens=tokens))
        first = last + 1
    return [replace(window, window=k, windows=len(windows)) for k, window in enumerate(windows)]
