"""Freed memory kept in the process for the next record, instead of handed back to the kernel.

orjson parses a value into a buffer sized for the worst case, twelve times the length of the
text (orjson 3.13: a text of 3.0 MB asks for 36 MB), and frees it once the value is built.
glibc's malloc serves a block of more than 32 MB (what a record of 2.7 MB or more asks for)
with a mapping of its own and unmaps it when it is freed, so every multi-megabyte record had
the kernel map, fault in and zero fresh pages again; and once 128 KB lies free at the top of a
heap, glibc trims that off too. Ingesting the benchmark's 2.2 GB Mind2Web file took 400,000
minor page faults for a peak of 0.9 GB.

`freed_memory_kept` tells glibc, for as long as it is open, to serve every block from its heaps
(a thread's heap still falls back to a mapping when a block outgrows it) and to keep up to 1 GiB
free at a heap's top: the same file then takes 180,000 faults, 0.4 s less system time and a few
per cent less CPU in all (benchmarks/README.md), for a peak 1-4% higher. On leaving, glibc's
defaults are put back (the mmap threshold stays where glibc's own tuning had moved it). The
steps that parse records open it: `raw_records`, and `standardized_tables` when it reads the raw
table. Elsewhere than glibc (musl, macOS) it does nothing.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

log = logging.getLogger(__name__)

# mallopt parameters, from glibc's <malloc.h>, and glibc's defaults for them
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
DEFAULT_TRIM_THRESHOLD = 128 * 1024
DEFAULT_MMAP_MAX = 65536
KEPT_FREE_BYTES = 1 << 30

_open = 0  # nested uses: the settings go back when the outermost one closes


@cache
def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's mallopt, or None where the C library is another."""
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 (only glibc has it)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


@contextmanager
def freed_memory_kept() -> Iterator[bool]:
    """glibc reuses freed memory while this is open; yields False where it cannot."""
    global _open
    mallopt = _mallopt()
    if mallopt is None:
        yield False
        return
    if _open == 0 and (
        mallopt(M_MMAP_MAX, 0) != 1 or mallopt(M_TRIM_THRESHOLD, KEPT_FREE_BYTES) != 1
    ):
        _defaults(mallopt)
        log.warning("glibc refused the malloc settings that keep freed memory for reuse")
        yield False
        return
    _open += 1
    try:
        yield True
    finally:
        _open -= 1
        if _open == 0:
            _defaults(mallopt)


def _defaults(mallopt: Callable[[int, int], int]) -> None:
    mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX)
    mallopt(M_TRIM_THRESHOLD, DEFAULT_TRIM_THRESHOLD)
