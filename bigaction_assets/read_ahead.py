"""An iterator advanced one item ahead in a thread, while the caller works on the current one.

Reading a Parquet row group is mostly decompression, which pyarrow does without holding the
GIL; what a check then does with the rows (parsing, counting, validating) is Python. Read one
row group ahead, the two overlap on two cores instead of following each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar, cast

T = TypeVar("T")
_END = object()


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """The items of `items`, in order, each taken in a worker thread while the caller holds
    the one before: at most one item waits. `items` is only ever advanced by that one thread,
    one step at a time; an error it raises reaches the caller at that item, and `items` is
    closed when the caller stops early."""
    with ThreadPoolExecutor(1, thread_name_prefix="read-ahead") as pool:
        pending: Future[object] = pool.submit(next, items, _END)
        try:
            while True:
                item = pending.result()
                if item is _END:
                    return
                pending = pool.submit(next, items, _END)
                yield cast(T, item)
        finally:
            if not pending.cancel():
                pending.exception()  # wait for the step under way (its error is not wanted)
            close = getattr(items, "close", None)
            if close is not None:
                close()
