"""The benchmark's inputs read back from a partition whose pages outsize the memory given."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from big_pages import GROUPS, KEY, PAGE_KB, PAGES_PER_GROUP, STEPS, page, sha, write_big_pages

CAP_MB = 192  # address space the reader may add to what its imports take


# Reads every episode's pages in a fresh process whose address space may grow by CAP_MB past
# what its imports took (the system allocator with one arena, so that the cap measures the
# reader and not allocators' reservations), and prints what each episode was given.
CHILD = """
import hashlib, json, resource, sys
from pathlib import Path
from bigaction_assets.benchmark.inputs import iter_benchmark_episodes
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
limit = int(status["VmSize"].split()[0]) * 1024 + int(sys.argv[3]) * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
seen = {}
for episode, events, _, pages in iter_benchmark_episodes(Path(sys.argv[1]), sys.argv[2]):
    wanted = [event["html_sha"] for event in events]
    seen[episode["episode_id"]] = [
        [sha, hashlib.sha256(pages[sha][0].encode()).hexdigest(), pages[sha][1][:40]]
        if sha in pages else [sha, None, None]
        for sha in wanted
    ]
print(json.dumps(seen))
"""


def test_pages_many_times_the_memory_cap_reach_every_episode_under_it(tmp_path):
    """~600 MB of pages in row groups of ~64 MB of raw HTML, read by a process allowed 192 MB
    more than its imports: a DuckDB query for an episode's pages (what the stage did before)
    runs out of DuckDB's own memory limit on row groups this size, and a whole row group read
    at once takes about twice its size; a reader that keeps only the rows it wants, a few at a
    time from pages of bounded size, stays under it."""
    write_big_pages(tmp_path)
    env = {**os.environ, "ARROW_DEFAULT_MEMORY_POOL": "system", "MALLOC_ARENA_MAX": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), KEY, str(CAP_MB)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    pages = GROUPS * PAGES_PER_GROUP
    page_mb = GROUPS * PAGES_PER_GROUP * PAGE_KB * 1.25 / 1024  # raw, and cleaned at a quarter
    assert page_mb > 3 * CAP_MB, "the pages must clearly outsize the cap"
    assert len(seen) == pages // STEPS
    for e, (episode_id, steps) in enumerate(sorted(seen.items())):
        assert episode_id == f"e{e:04d}"
        for s, (shown, raw_sha, cleaned_head) in enumerate(steps):
            n = s * (pages // STEPS) + e
            assert shown == raw_sha == sha(page(n)[0]), (episode_id, s)  # the raw page, whole
            assert cleaned_head == page(n)[1][:40]  # and its cleaned form beside it
