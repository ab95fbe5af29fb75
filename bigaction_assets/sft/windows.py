"""Long episodes cut into self-contained windows of whole steps that each fit a context length."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bigaction_assets.joined_tokens import facts
from bigaction_assets.sft.counting import LengthCounter
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.images import IMAGE_TOKENS
from bigaction_assets.sft.observations import fit_to_tokens
from bigaction_assets.sft.turns import Conversation, Turn

OBSERVATION_ROLES = ("user", "tool")


@dataclass(frozen=True)
class _Step:
    """The turns before an assistant turn (answers to the previous call first), and the turn."""

    before: list[Turn]
    action: Turn


Parts = tuple[Turn | None, list[_Step]]


class NoAction(ValueError):
    """A conversation without an assistant turn: nothing in it to train on."""


def _parts(turns: list[Turn]) -> Parts:
    """(the first user turn, the steps after it); what follows the last assistant turn is left
    out, as no window ends there."""
    head = turns[0] if turns and turns[0].role == "user" else None
    steps: list[_Step] = []
    before: list[Turn] = []
    for turn in turns[1 if head else 0 :]:
        if turn.role == "assistant":
            steps.append(_Step(before, turn))
            before = []
        else:
            before.append(turn)
    return head, steps


def _detached(before: list[Turn]) -> list[Turn]:
    """Results of a call made in an earlier window, shown as what the user sees instead (with
    the screenshots they show)."""
    return [
        Turn("user", turn.content, images=turn.images) if turn.role == "tool" else turn
        for turn in before
    ]


def _window_turns(parts: Parts, first: int, last: int) -> list[Turn]:
    """Head and steps `first..last`: it ends on the assistant turn of step `last`."""
    head, steps = parts
    turns = [head] if head else []
    for k in range(first, last + 1):
        before = _detached(steps[k].before) if k == first and first > 0 else steps[k].before
        turns += [*before, steps[k].action]
    return turns


def _cut_to_fit(
    episode_id: str, turns: list[Turn], max_tokens: int, protected: int, count: LengthCounter
) -> tuple[list[Turn], int]:
    """Shorten the longest observation turn (never the first `protected` turns) until it fits:
    the turns, and their tokens."""
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
                f"episode {episode_id}: a step needs {tokens} tokens with every observation "
                f"emptied, more than max_tokens={max_tokens}; its action alone is too long"
            )
        target = min(size - (tokens - max_tokens), size - 1)  # strictly shorter: it terminates
        cut = turns[position]
        turns[position] = replace(cut, content=fit_to_tokens(cut.content, target))
        tokens = count(turns)
    return turns, tokens


def split_into_windows(
    conv: Conversation,
    max_tokens: int,
    formats: Sequence[str] = SFT_FORMATS,
    image_tokens: int = IMAGE_TOKENS,
) -> list[Conversation]:
    """Windows of whole steps, each within `max_tokens` by `conversation_tokens` in `formats`
    (each screenshot costing `image_tokens` in the formats that carry images).

    Every window starts with the first user turn (the task) so it stands alone, and ends on an
    assistant turn, where a trainer learns: one rule for every format. A step is the
    observation turns before an assistant turn plus that turn; what answers a window's last
    call opens the next window, after the task, as what the user sees (its call is not in that
    window), and what follows the episode's last assistant turn is in no window. Each window
    holds the longest run of steps that fits: a window one step longer adds that step's
    messages to its length (`counting.LengthCounter`), so an episode is counted in one pass,
    each message once. A step too long even alone has its longest observations cut until it
    fits.

    Raises:
        NoAction: the conversation has no assistant turn.
        ValueError: the system prompt, tools and task alone exceed `max_tokens`, or a step's
            action is too long to fit even with its observations emptied.
    """
    parts = _parts(conv.turns)
    head, steps = parts
    if not steps:
        raise NoAction(f"episode {conv.episode_id}: no assistant turn, nothing to train on")
    protected = 1 if head else 0
    count = LengthCounter(conv, formats, image_tokens)
    base = count.total(count.lengths([head] if head else []))
    if base > max_tokens:
        raise ValueError(
            f"episode {conv.episode_id}: the system prompt, tools and task take {base} tokens, "
            f"more than max_tokens={max_tokens}; raise max_tokens or shorten the first user turn"
        )
    windows: list[tuple[list[Turn], int]] = []  # turns and tokens; Conversations made last
    first, final = 0, len(steps) - 1
    while first <= final:
        # a window's messages: the task with what the user sees first, then the steps' own
        # (a step's observations, then its action, which joins the action before it when the
        # step shows nothing); `closed` holds all but the open assistant message
        before = _detached(steps[first].before) if first > 0 else steps[first].before
        opening = [head, *before] if head else before
        closed = _plus(count.frame, count.message(opening)) if opening else count.frame
        action = [steps[first].action]
        action_lengths = count.message(action)
        tokens = count.total(_plus(closed, action_lengths))
        if tokens > max_tokens:
            alone = _window_turns(parts, first, first)
            windows.append(_cut_to_fit(conv.episode_id, alone, max_tokens, protected, count))
            first += 1
            continue
        last = first
        while last < final:
            step = steps[last + 1]
            if step.before:
                grown = _plus(_plus(closed, action_lengths), count.message(step.before))
                longer_action = [step.action]
            else:
                grown, longer_action = closed, [*action, step.action]
            longer_lengths = count.message(longer_action)
            longer = count.total(_plus(grown, longer_lengths))
            if longer > max_tokens:
                break
            closed, action, action_lengths = grown, longer_action, longer_lengths
            last, tokens = last + 1, longer
        windows.append((_window_turns(parts, first, last), tokens))
        first = last + 1
    return [
        Conversation(conv.episode_id, conv.system, conv.tools, turns, k, len(windows), tokens)
        for k, (turns, tokens) in enumerate(windows)
    ]


def _plus(lengths: list[int], more: list[int]) -> list[int]:
    """Per-format lengths added."""
    return [a + b for a, b in zip(lengths, more, strict=True)]
