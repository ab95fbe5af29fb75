"""A `spawn` start method whose processes do not run the parent's main module again.

A spawned process imports the parent's `__main__` before it takes work, so that functions
defined there can be unpickled. Our workers' functions live in modules of their own, and the
parent's main is whatever launched the run: `dagster`'s console script (which imports the whole
CLI, ~0.75 s, and more of Dagster with it), `celery`, `uvicorn` or the demo. Measured on the
SFT stage (synatra x20,000, 2 workers): under the `dagster` script the step took 6.7-7.0 s
and 12.2-12.5 CPU s, against 5.1-5.4 s and 9.0-9.5 when its main imported nothing.

Which main a child imports is decided from `sys.modules["__main__"]` while the child is being
launched (`multiprocessing.spawn.get_preparation_data`), so for exactly that moment a bare
module stands in for it; the parent's own main is back before the launch returns. So a pool on
this context must send only what importable modules define: nothing of the main module's own.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

_swap = threading.Lock()


@contextmanager
def main_module_hidden() -> Iterator[None]:
    """`sys.modules["__main__"]` is a bare module (no file, no spec) inside the block."""
    with _swap:
        main = sys.modules["__main__"]
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            sys.modules["__main__"] = main


class CleanSpawnProcess(SpawnProcess):
    """A spawned process that starts from the interpreter alone, not from the parent's main."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with main_module_hidden():
            return SpawnProcess._Popen(process_obj)


class CleanSpawnContext(SpawnContext):
    Process = CleanSpawnProcess


def clean_spawn_context() -> CleanSpawnContext:
    """For `ProcessPoolExecutor(mp_context=...)`: workers that import only what they run."""
    return CleanSpawnContext()
