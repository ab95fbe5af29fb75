"""Train and test judgements: a source's own split stands; the rest are drawn by ProactiveAgent's
rule, a fixed number per category to test, unanimous ones first.

ProactiveAgent publishes its reward data as separate train and test files, so a judgement from
one of them keeps that file's split. For judgements that come without one (the annotation app's
labels), ProactiveAgent's rule draws 30 per category with seed 42: first among judgements all of
(at least) 3 annotators agree with, then among those exactly 2 agree with; the rest is train.
The draw is keyed by each judgement's own id (sha256 of seed and id) rather than a shuffle of a
list, so a judgement's place in the order never depends on which others exist or in what order
they were read: adding labels moves an item into the test set only by outranking one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from bigaction_assets.reward.rules import CATEGORIES, Judgement

TEST_PER_CATEGORY = 30
SEED = 42
UNANIMOUS_MIN = 3
SPLITS = ("train", "test")


def _tier(judgement: Judgement) -> int | None:
    """0: unanimous among at least 3; 1: exactly 2 agree; None: not eligible for the test set."""
    agreeing, total = judgement.agreeing, len(judgement.votes)
    if total >= UNANIMOUS_MIN and agreeing == total:
        return 0
    if agreeing == 2:
        return 1
    return None


def _rank(seed: int, example_id: str) -> str:
    return hashlib.sha256(f"{seed}\0{example_id}".encode()).hexdigest()


def held_out_ids(
    judgements: Iterable[Judgement], per_category: int = TEST_PER_CATEGORY, seed: int = SEED
) -> set[str]:
    """Ids of the judgements in the test set; every other one is train."""
    by_category: dict[str, list[tuple[int, str, str]]] = {c: [] for c in CATEGORIES}
    for judgement in judgements:
        tier = _tier(judgement)
        if tier is not None:
            key = (tier, _rank(seed, judgement.example_id), judgement.example_id)
            by_category[judgement.category].append(key)
    chosen: set[str] = set()
    for keys in by_category.values():
        chosen.update(example_id for _, _, example_id in sorted(keys)[:per_category])
    return chosen


def assign_splits(
    judgements: Iterable[Judgement], per_category: int = TEST_PER_CATEGORY, seed: int = SEED
) -> dict[str, str]:
    """The split of every judgement by id: its own, else ProactiveAgent's draw among those
    without one.

    Raises:
        ValueError: a judgement's source gave it a split other than train or test.
    """
    judged = list(judgements)
    unsplit = [j for j in judged if j.split is None]
    for j in judged:
        if j.split is not None and j.split not in SPLITS:
            raise ValueError(f"{j.example_id} has split {j.split!r}; reward sets have {SPLITS}")
    test = held_out_ids(unsplit, per_category, seed)
    return {j.example_id: j.split or ("test" if j.example_id in test else "train") for j in judged}
