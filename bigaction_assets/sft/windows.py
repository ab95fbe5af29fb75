"""Long episodes cut into self-contained windows of whole steps that each fit a context length."""

from __future__ import annotations

from dataclasses import dataclass, replace

import orjson

from bigaction_assets.sft.conversation import Conversation, Turn
from bigaction_assets.sft.lengths import example_tokens
from bigaction_assets.sft.observations import fit_to_tokens
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import render_sharegpt
from bigaction_assets.tokens import count_tokens

RENDERERS = {"openai": render_openai, "sharegpt": render_sharegpt, "openhands": render_openhands}
OBSERVATION_ROLES = ("user", "tool")


def conversation_tokens(conv: Conversation) -> int:
    """cl100k_base tokens of the longest of the three renderings, as `lengths` counts them
    (every text a chat template shows, plus a fixed overhead per message)."""
    return example_tokens({name: render(conv) for name, render in RENDERERS.items()})


# Per turn: the framing of a message, a tool-call id, openhands' "EXECUTION RESULT of
# [name]:" and <function=...> tags; per call argument: its key and <parameter=...> tags.
# Generous on purpose: merged turns and the tags of every format fit under them.
TURN_OVERHEAD = 24
ARGUMENT_OVERHEAD = 12


class _Estimator:
    """A cheap, generous estimate of `conversation_tokens`, additive over turns.

    Windowing tries many runs of steps; rendering each in three formats would redo the same
    work again and again. Each turn is counted once here (plus overheads), and the fixed part
    (system prompt and tool documentation, the largest of the three formats) once per
    conversation. Windows chosen with it are then checked with the exact count.
    """

    def __init__(self, conv: Conversation) -> None:
        self.fixed = conversation_tokens(replace(conv, turns=[]))
        # by id, holding the turn: a freed turn's id can be reused by a new one
        self.memo: dict[int, tuple[Turn, int]] = {}

    def turn(self, turn: Turn) -> int:
        known = self.memo.get(id(turn))
        if known is None:
            tokens = count_tokens(turn.content) + TURN_OVERHEAD
            for call in turn.tool_calls:
                tokens += count_tokens(orjson.dumps(call.arguments).decode())
                tokens += count_tokens(call.name) + ARGUMENT_OVERHEAD * (1 + len(call.arguments))
            known = self.memo[id(turn)] = (turn, tokens)
        return known[1]

    def __call__(self, turns: list[Turn]) -> int:
        return self.fixed + sum(self.turn(turn) for turn in turns)


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


def _cut_to_fit(conv: Conversation, max_tokens: int, protected: int) -> Conversation:
    """Shorten the longest observation turn (never the first `protected` turns) until it fits."""
    turns = list(conv.turns)
    tokens = conversation_tokens(conv)
    while tokens > max_tokens:
        sizes = [
            (count_tokens(turn.content), position)  # the longest; of equals, the last
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
        tokens = conversation_tokens(conv)
    return replace(conv, tokens=tokens)


def split_into_windows(conv: Conversation, max_tokens: int) -> list[Conversation]:
    """Windows of whole steps, each within `max_tokens` by `conversation_tokens`.

    Every window starts with the first user turn (the task) so it stands alone. A step is the
    observation turns before an assistant turn plus that turn; a window ends with the results
    answering its last call, and the next window shows those results as a user turn (their
    call is not in it). A step too long even alone has its longest observations cut until it
    fits. A short episode comes back as one window equal to the input.

    Raises:
        ValueError: the system prompt, tools and task alone exceed `max_tokens`, or a step's
            action is too long to fit even with its observations emptied.
    """
    parts = _parts(conv.turns)
    head, steps, _ = parts
    protected = 1 if head else 0
    base = conversation_tokens(replace(conv, turns=[head] if head else []))
    if base > max_tokens:
        raise ValueError(
            f"episode {conv.episode_id}: the system prompt, tools and task take {base} tokens, "
            f"more than max_tokens={max_tokens}; raise max_tokens or shorten the first user turn"
        )
    estimate = _Estimator(conv)
    if estimate(conv.turns) <= 2 * max_tokens:  # far beyond the limit, skip the exact count
        exact = conversation_tokens(conv)
        if exact <= max_tokens:
            return [replace(conv, turns=list(conv.turns), window=0, windows=1, tokens=exact)]
    if not steps:
        return [_cut_to_fit(replace(conv, turns=list(conv.turns)), max_tokens, protected)]

    def fits(first: int, last: int) -> bool:
        return estimate(_window(conv, parts, first, last).turns) <= max_tokens

    windows: list[Conversation] = []
    first, final = 0, len(steps) - 1
    while first <= final:
        if fits(first, final):
            windows.append(_window(conv, parts, first, final))
            break
        if not fits(first, first):
            windows.append(_cut_to_fit(_window(conv, parts, first, first), max_tokens, protected))
            first += 1
            continue
        fitting, too_long = first, final  # the longest run that fits, by bisection
        while too_long - fitting > 1:
            middle = (fitting + too_long) // 2
            fitting, too_long = (middle, too_long) if fits(first, middle) else (fitting, middle)
        windows.append(_window(conv, parts, first, fitting))
        first = fitting + 1
    # the estimate is generous, not exact: confirm each window and cut the rare one it missed
    final = []
    for window in windows:
        tokens = window.tokens if window.tokens is not None else conversation_tokens(window)
        fitting = tokens <= max_tokens
        final.append(
            replace(window, tokens=tokens)
            if fitting
            else _cut_to_fit(window, max_tokens, protected)
        )
    return [replace(window, window=k, windows=len(final)) for k, window in enumerate(final)]
