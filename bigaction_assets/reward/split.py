"""The test set of judged proposals: a fixed number per category, unanimous ones first.

ProactiveAgent draws 30 per category with seed 42: first among judgements all of (at least) 3
annotators agree with, then among those exactly 2 agree with; the rest is train. The draw here
is keyed by each judgement's own id (sha256 of seed and id) rather than a shuffle of a list, so
a judgement's place in the order never depends on which others exist or in what order they
were read: adding labels moves an item into the test set only by outranking one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from bigaction_assets.reward.rules import CATEGORIES, Judgement

TEST_PER_CATEGORY = 30
SEED = 42
UNANIMOUS_MIN = 3


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
