"""Freed memory kept for reuse (`heap_reuse`): while it is open, a block freed and asked for
again is not faulted in afresh; after, glibc's defaults are back. Counted in a child process's
minor page faults, so this test process keeps its own allocator's settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Allocates and frees a 40 MB block (filled, so its pages are touched) ten times after a first
# time, and prints the minor page faults of those ten: as glibc does by default ("default"),
# inside `freed_memory_kept` (nested once, "kept"), and after leaving it ("after").
CHILD = """
import json, resource, sys
from bigaction_assets.heap_reuse import freed_memory_kept

def faults():
    size = 40 << 20
    block = b"x" * size
    del block
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        block = b"x" * size
        del block
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

mode, kept = sys.argv[1], None
if mode == "default":
    counted = faults()
else:
    with freed_memory_kept() as kept, freed_memory_kept():
        counted = faults()
    if mode == "after":
        counted = faults()
print(json.dumps({"kept": kept, "faults": counted}))
"""


def faults(mode: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc is Linux's")
def test_a_block_freed_and_asked_for_again_is_not_faulted_in_afresh_while_kept() -> None:
    default, kept, after = faults("default"), faults("kept"), faults("after")
    assert kept["kept"] is True
    # by default every 40 MB block is a fresh mapping: ~10,240 faults of 4 KB pages each time
    # (fewer where the kernel hands out huge pages, but ten blocks' worth either way)
    assert default["faults"] >= 10 * 10
    assert kept["faults"] < default["faults"] / 10, (default, kept)
    # and once left, freed blocks go back to the kernel as before
    assert after["faults"] > default["faults"] / 2, (default, after)
