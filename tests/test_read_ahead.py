"""`read_ahead`: the same items in order, one taken ahead in a thread, errors and early stops
handled where the caller is."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from bigaction_assets.read_ahead import read_ahead


class Source:
    def __init__(self, count: int, fail_at: int | None = None) -> None:
        self.count, self.fail_at = count, fail_at
        self.made: list[int] = []
        self.threads: set[str] = set()
        self.closed = False

    def items(self) -> Iterator[int]:
        try:
            for number in range(self.count):
                self.threads.add(threading.current_thread().name)
                if number == self.fail_at:
                    raise ValueError(f"item {number} is unreadable")
                self.made.append(number)
                yield number
        finally:
            self.closed = True


def test_every_item_in_order_taken_in_another_thread_at_most_one_ahead():
    source = Source(50)
    seen = []
    for item in read_ahead(source.items()):
        assert len(source.made) <= item + 2  # this item and at most the next
        seen.append(item)
    assert seen == list(range(50))
    assert source.threads and threading.current_thread().name not in source.threads


def test_an_error_reaches_the_caller_at_its_item():
    source = Source(10, fail_at=4)
    seen = []
    with pytest.raises(ValueError, match="item 4 is unreadable"):
        for item in read_ahead(source.items()):
            seen.append(item)
    assert seen == [0, 1, 2, 3] and source.closed


def test_a_caller_that_stops_early_closes_the_source():
    source = Source(1_000)
    for item in read_ahead(source.items()):
        if item == 2:
            break
    assert source.closed and len(source.made) <= 4


def test_an_empty_source():
    assert list(read_ahead(iter([]))) == []
