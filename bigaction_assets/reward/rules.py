"""ProactiveAgent's rules: from annotators' choices on a turn to judged proposals and categories.

A turn shows the events so far and the tasks an assistant proposed. Each annotator accepts some
tasks (or none) and says whether help is needed. A task is valid when at least 2 annotators
accepted it and invalid when at least 2 rejected it; help is needed when some task was chosen by
all. Besides one judgement per decided task, a turn yields one for proposing nothing (the null
task): wrong when help was needed, right otherwise. Categories: MN (no task, help needed), CR
(no task, no help needed), CD (task, valid), FA (task, invalid).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CATEGORY_NAMES = {
    "MN": "Missed-Need (MN)",
    "CR": "Correct-Rejection (CR)",
    "CD": "Correct-Detection (CD)",
    "FA": "False-Alarm (FA)",
}
CATEGORIES = tuple(CATEGORY_NAMES)
CATEGORY_CODES = {name: code for code, name in CATEGORY_NAMES.items()}
MIN_VOTES = 2  # "at least 2 annotators"


@dataclass(frozen=True, slots=True)
class Observation:
    time: str
    event: str


@dataclass(frozen=True, slots=True)
class Judgement:
    """People's verdict on one proposal: after `observations`, propose `task` (None: nothing).

    Attributes:
        votes: per annotator, True when they agreed with proposing this task; for the null task,
            True when they chose no task at all.
        valid: the verdict on the proposal.
        help_needed: whether the turn needed help (some task chosen by all).
        split: the split its source gave it (`train`, `test`); None when it came without one.
    """

    example_id: str
    episode_id: str
    observations: tuple[Observation, ...]
    task: str | None
    valid: bool
    help_needed: bool
    votes: tuple[bool, ...]
    origin: str
    split: str | None = None

    @property
    def category(self) -> str:
        return category(self.task, self.valid, self.help_needed)

    @property
    def agreeing(self) -> int:
        """Annotators whose vote matches the verdict."""
        return sum(1 for vote in self.votes if vote == self.valid)


@dataclass(frozen=True, slots=True)
class TurnLabel:
    """One annotator's answer on a turn: the candidate tasks accepted (by position) and whether
    help is needed (asked when no task is accepted; accepting a task implies it)."""

    accepted: frozenset[int]
    help_needed: bool | None


def category(task: str | None, valid: bool, help_needed: bool) -> str:
    if task is None:
        return "MN" if help_needed else "CR"
    return "CD" if valid else "FA"


def verdict(votes: Sequence[bool]) -> bool | None:
    """True when at least 2 accepted, False when at least 2 rejected, None when neither (or,
    with 4 or more annotators, both) holds."""
    accepted = sum(1 for vote in votes if vote)
    rejected = len(votes) - accepted
    if accepted >= MIN_VOTES and rejected < MIN_VOTES:
        return True
    if rejected >= MIN_VOTES and accepted < MIN_VOTES:
        return False
    return None


def judge_turn(
    item_id: str,
    episode_id: str,
    observations: Sequence[Observation],
    candidates: Sequence[str],
    labels: Sequence[TurnLabel],
) -> tuple[list[Judgement], int]:
    """The judgements a turn yields, and how many of its tasks stayed undecided.

    Ids: `<item id>.none` for the null task, `<item id>.task<k>` for candidate k, so every id
    still starts with the item's `<episode id>#<n>`.

    Where the turn proposed no task the rule "some task chosen by all" cannot speak, so help is
    needed when every annotator said so (the same unanimity).
    """
    if len(labels) < MIN_VOTES:
        return [], 0
    obs = tuple(observations)
    if candidates:
        help_needed = any(
            all(k in label.accepted for label in labels) for k in range(len(candidates))
        )
        chose_nothing = tuple(not label.accepted for label in labels)
    else:
        help_needed = all(label.help_needed is True for label in labels)
        chose_nothing = tuple(label.help_needed is not True for label in labels)
    found = [
        Judgement(
            f"{item_id}.none", episode_id, obs, None, not help_needed, help_needed,
            chose_nothing, "app",
        )
    ]  # fmt: skip
    undecided = 0
    for k, task in enumerate(candidates):
        votes = tuple(k in label.accepted for label in labels)
        decided = verdict(votes)
        if decided is None:
            undecided += 1
            continue
        found.append(
            Judgement(
                f"{item_id}.task{k}", episode_id, obs, task, decided, help_needed, votes, "app"
            )
        )
    return found, undecided


def check_annotated(
    task: str | None, valid: bool, help_needed: bool, votes: Sequence[bool], named: str | None
) -> str | None:
    """Why an annotated row of ProactiveAgent's reward data breaks the rules, or None.

    A task's verdict must be its votes' majority; proposing nothing is valid exactly when no
    help was needed; a category given must be the one the rules give.
    """
    if len(votes) < MIN_VOTES:
        return f"{len(votes)} annotation(s); the rules need at least {MIN_VOTES}"
    if task is not None:
        decided = verdict(votes)
        if decided is None:
            return f"annotations {list(votes)} give no verdict (neither 2 accept nor 2 reject)"
        if decided != valid:
            return f"valid={valid} but annotations {list(votes)} say {decided}"
    elif valid == help_needed:
        return f"no task proposed: valid={valid} must be the opposite of help_needed"
    if named is not None:
        derived = CATEGORY_NAMES[category(task, valid, help_needed)]
        if named != derived:
            return f"category {named!r} but the rules give {derived!r}"
    return None
