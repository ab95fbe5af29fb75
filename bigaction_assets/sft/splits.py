"""Train/validation/test assignment by episode id, and exact-duplicate removal by content."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

DEFAULT_RATIOS: Mapping[str, float] = {"train": 0.9, "validation": 0.05, "test": 0.05}
_SCALE = float(1 << 64)


def check_ratios(ratios: Mapping[str, float]) -> None:
    if not ratios or any(r < 0 for r in ratios.values()):
        raise ValueError(f"split ratios must be non-negative and name at least one split: {ratios}")
    if abs(sum(ratios.values()) - 1.0) > 1e-9:
        raise ValueError(f"split ratios must add up to 1, not {sum(ratios.values())}: {ratios}")


def assign_split(
    episode_id: str, ratios: Mapping[str, float] = DEFAULT_RATIOS, salt: str = ""
) -> str:
    """The split an episode belongs to, from a hash of its id alone.

    Every window of an episode lands in the same split, and adding or removing other episodes
    never moves one: the position in [0, 1) depends on nothing but the id (and the salt, which
    lets a team draw a fresh, equally stable split).
    """
    check_ratios(ratios)
    digest = hashlib.sha256(f"{salt}\x00{episode_id}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / _SCALE
    cumulative = 0.0
    names = list(ratios)
    for name in names:
        cumulative += ratios[name]
        if position < cumulative:
            return name
    return names[-1]  # float rounding at the very top


def content_hash(example: Any) -> str:
    """sha256 of an example's canonical JSON (sorted keys), for exact-duplicate detection."""
    return hashlib.sha256(orjson.dumps(example, option=orjson.OPT_SORT_KEYS)).hexdigest()
