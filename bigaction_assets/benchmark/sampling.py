"""Seeded candidate sampling keyed by (seed, task, step), stable across runs and datasets.

Every draw is an ordering by sha256 of (seed, task id, step, element id): a step's candidates
depend on nothing but its own elements and the seed, so adding tasks, reordering files or
changing Python never changes them. Python's `hash()` is salted per process; `random`'s
algorithms are not promised across versions; a hash is both.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_DIGITS = re.compile(r"(\d+)")


def draw_key(seed: int, task_id: str, step: int, element: str) -> bytes:
    """Where `element` falls in this step's draw."""
    return hashlib.sha256(f"{seed}\x1f{task_id}\x1f{step}\x1f{element}".encode()).digest()


def natural_key(element: str) -> tuple[object, ...]:
    """`"8705"` before `"10612"`: ids compared as the numbers they hold."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(element))


def sample_choices(
    positive: str | None, negatives: Iterable[str], k: int, seed: int, task_id: str, step: int
) -> list[str]:
    """`k` negatives (all when fewer) plus the positive, in a seeded order.

    Args:
        positive: the target element's id, or None for a step without one.
        negatives: ids of the other candidates; repeats and the positive are ignored.
    """
    pool = sorted(set(negatives) - {positive}, key=natural_key)
    drawn = sorted(pool, key=lambda e: draw_key(seed, task_id, step, e))[: max(k, 0)]
    if positive is not None:
        drawn.append(positive)
    # a second, independent order, so the positive's place is not tied to the negatives drawn
    return sorted(drawn, key=lambda e: draw_key(seed, task_id, step, f"order\x1f{e}"))
