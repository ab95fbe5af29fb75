"""What an SFT worker process does when it starts, before it takes its first chunk.

A worker only renders: it builds Arrow tables from Python lists and counts tokens. pyarrow,
the first time it converts a Python list, imports pandas to learn whether the list might be a
pandas object (`pyarrow.lib._is_array_like`); pandas is installed here for the lake's other
stages, so every worker paid ~0.3 s of CPU (~0.45 s with what pandas imports in turn) for a
library it never uses. A worker refuses that import instead, so pyarrow finds no pandas and
takes lists as lists, and loads the tokenizer's tables while the caller reads the first chunks.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from bigaction_assets.tokens import fast_encoding

REFUSED_IN_WORKERS = ("pandas",)


class RefuseImports:
    """An import finder that refuses `names` (and their submodules) with ModuleNotFoundError,
    as if they were not installed. Setting `sys.modules[name] = None` does not do: pyarrow's
    compiled import reads `sys.modules` directly and takes the None for the module."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"{name} is not imported in an SFT worker", name=name)
        return None


def start_worker() -> None:
    """The SFT pool's initializer: no pandas, and the tokenizer ready."""
    if not any(isinstance(finder, RefuseImports) for finder in sys.meta_path):
        sys.meta_path.insert(0, RefuseImports(REFUSED_IN_WORKERS))
    fast_encoding()
