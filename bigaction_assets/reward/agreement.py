"""Fleiss' kappa: how far annotators agree beyond chance, over items with several raters.

For item i with n_i raters, n_ij of whom chose category j: P_i = (Σ_j n_ij² − n_i) /
(n_i (n_i − 1)); p_j = Σ_i n_ij / Σ_i n_i; κ = (P̄ − P̄_e) / (1 − P̄_e) with P̄ the mean of P_i
and P̄_e = Σ_j p_j². With the same number of raters per item this is Fleiss (1971); items with
other numbers of raters (at least 2) enter the same way, each P_i over its own pairs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """κ over rows of category counts (one row per item, one column per category).

    None when it is undefined: no item with 2 or more raters, or every rating in one category
    (chance agreement is then 1).
    """
    rows = [row for row in counts if sum(row) >= 2]
    if not rows:
        return None
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise ValueError("every item needs a count for every category")
    agreement = [(sum(n * n for n in row) - sum(row)) / (sum(row) * (sum(row) - 1)) for row in rows]
    total = sum(sum(row) for row in rows)
    shares = [sum(row[j] for row in rows) / total for j in range(width)]
    observed = sum(agreement) / len(rows)
    chance = sum(p * p for p in shares)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def counts_by_item(
    ratings: Iterable[tuple[Hashable, Hashable]], categories: Sequence[Hashable]
) -> list[list[int]]:
    """(item, category) pairs as the count rows `fleiss_kappa` takes, items in first-seen order."""
    per_item: dict[Hashable, Counter[Hashable]] = {}
    for item, chosen in ratings:
        if chosen not in categories:
            raise ValueError(f"category {chosen!r} is not one of {list(categories)}")
        per_item.setdefault(item, Counter())[chosen] += 1
    return [[tally[c] for c in categories] for tally in per_item.values()]


def kappa_summary(
    ratings: Iterable[tuple[Hashable, Hashable]], categories: Sequence[Hashable]
) -> Mapping[str, float | int | None]:
    """κ with what it was computed on: items with 2+ raters, and their ratings."""
    counts = [row for row in counts_by_item(ratings, categories) if sum(row) >= 2]
    kappa = fleiss_kappa(counts)
    return {
        "fleiss_kappa": round(kappa, 4) if kappa is not None else None,
        "items": len(counts),
        "ratings": sum(sum(row) for row in counts),
    }
