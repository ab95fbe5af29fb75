"""Counts of a release's rows as it is written: per config and split, and per source."""

from __future__ import annotations

from collections import Counter, defaultdict


class Tally:
    """Rows of a release per config and split, and per config, source and split."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, int]] = defaultdict(dict)
        self.by_source: dict[str, dict[str, Counter[str]]] = defaultdict(
            lambda: defaultdict(Counter)
        )

    def add(self, config: str, split: str, source: str, rows: int) -> None:
        self.by_source[config][source][split] += rows

    def add_rows(self, config: str, split: str, rows: int) -> None:
        self.rows[config][split] = self.rows[config].get(split, 0) + rows
