"""Long episodes cut into self-contained windows of whole steps that each fit a context length."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bigaction_assets.joined_tokens import facts
from bigaction_assets.sft.conversation import Conversation, Turn
from bigaction_assets.sft.counting import LengthCounter
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


def split_into_windows(conv: Conversation, max_tokens: int) -> list[Conversation]:
    """Windows of whole steps, each within `max_tokens` by `conversation_tokens`.

    Every window starts with the first user turn (the task) so it stands alone. A step is the
    observation turns before an assistant turn plus that turn; a window ends with the results
    answering its last call, and the next window shows those results as a user turn (their
    call is not in it). Each window holds the longest run of steps that fits, found by
    bisection on exact counts (composed from the turns' counts, so trying a run costs no
    rendering). A step too long even alone has its longest observations cut until it fits. A
    short episode comes back as one window equal to the input.

    Raises:
        ValueError: the system prompt, tools and task alone exceed `max_tokens`, or a step's
            action is too long to fit even with its observations emptied.
    """
    parts = _parts(conv.turns)
    head, steps, _ = parts
    protected = 1 if head else 0
    count = LengthCounter(conv)
    base = count([head] if head else [])
    if base > max_tokens:
        raise ValueError(
            f"episode {conv.episode_id}: the system prompt, tools and task take {base} tokens, "
            f"more than max_tokens={max_tokens}; raise max_tokens or shorten the first user turn"
        )
    whole = count(conv.turns)
    if whole <= max_tokens:
        return [replace(conv, turns=list(conv.turns), window=0, windows=1, tokens=whole)]
    if not steps:
        return [_cut_to_fit(replace(conv, turns=list(conv.turns)), max_tokens, protected, count)]

    def counted(first: int, last: int) -> Conversation:
        window = _window(conv, parts, first, last)
        return replace(window, tokens=count(window.turns))

    windows: list[Conversation] = []
    first, final = 0, len(steps) - 1
    while first <= final:
        rest = counted(first, final)
        if rest.tokens <= max_tokens:
            windows.append(rest)
            break
        fitting = counted(first, first)
        if fitting.tokens > max_tokens:
            windows.append(_cut_to_fit(fitting, max_tokens, protected, count))
            first += 1
            continue
        low, too_long = first, final  # the longest run that fits, by bisection
        while too_long - low > 1:
            middle = (low + too_long) // 2
            candidate = counted(first, middle)
            if candidate.tokens <= max_tokens:
                low, fitting = middle, candidate
            else:
                too_long = middle
        windows.append(fitting)
        first = low + 1
    return [replace(window, window=k, windows=len(windows)) for k, window in enumerate(windows)]
