"""Pausing Python's cyclic garbage collector around work that builds many acyclic objects."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: rows, parsed records and trees of dicts and lists
    hold no reference cycles (reference counting frees them), yet their numbers set off
    collections that walk the whole heap, Dagster's included, again and again (a tenth of the
    standardize step's CPU; half of parsing a large page). The collector is restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
