"""The benchmark's inputs read back from a partition whose pages outsize the memory given."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.lake import partition_path
from bigaction_assets.lake_writer import open_partition

KEY = "mind2web.big_pages"
CAP_MB = 192  # address space the reader may add to what its imports take
PAGE_KB = 384  # a Mind2Web raw page runs to hundreds of kilobytes
PAGES_PER_GROUP = 160  # ~64 MB of raw HTML a row group, as ingest's sinks write them
GROUPS = 8
STEPS = 5


def _page(n: int) -> tuple[str, str]:
    """A page's raw HTML and its cleaned form, each distinct (they compress to almost nothing,
    so the files stay small while the pages in memory do not)."""
    body = f"<div class='row{n % 7}'>item</div>" * (PAGE_KB * 1024 // 32)
    raw = f"<html><!-- page {n} -->{body}</html>"
    return raw, f"<html><!-- cleaned {n} -->{body[: len(body) // 4]}</html>"


def _sha(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _write_partition(lake) -> None:
    """Episodes of five steps, each step on a page of its own; consecutive steps' pages sit in
    different row groups, so one episode's pages are spread over several."""
    pages = GROUPS * PAGES_PER_GROUP
    episodes = [f"e{n:04d}" for n in range(pages // STEPS)]
    # step s of episode e is page number s * (pages / STEPS) + e: a row group apart each
    order = [s * len(episodes) + e for e in range(len(episodes)) for s in range(STEPS)]
    tables = {
        "episodes": pl.DataFrame({"episode_id": episodes}),
        "events": pl.DataFrame(
            {
                "episode_id": [e for e in episodes for _ in range(STEPS)],
                "idx": [s for _ in episodes for s in range(STEPS)],
                "html_sha": [_sha(_page(n)[0]) for n in order],
            },
            schema={"episode_id": pl.String, "idx": pl.Int32, "html_sha": pl.String},
        ),
    }
    for asset, table in tables.items():
        path = partition_path(lake, "standardized", asset, KEY)
        path.parent.mkdir(parents=True, exist_ok=True)
        table.write_parquet(path)
    schema = pa.schema(
        [("html_sha", pa.large_string()), ("raw_html", pa.large_string()),
         ("cleaned_html", pa.large_string())]
    )  # fmt: skip
    # through the lake's own writer, a sink's batch at a time, as ingest writes pages
    with open_partition(lake, "standardized", "dom_snapshots", KEY, schema) as writer:
        for group in range(GROUPS):
            numbers = range(group * PAGES_PER_GROUP, (group + 1) * PAGES_PER_GROUP)
            raw, cleaned = zip(*(_page(n) for n in numbers), strict=True)
            columns = [[_sha(r) for r in raw], list(raw), list(cleaned)]
            writer.write(pa.table(columns, schema=schema))
    file = pq.ParquetFile(partition_path(lake, "standardized", "dom_snapshots", KEY))
    assert file.num_row_groups == GROUPS


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
    _write_partition(tmp_path)
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
        for s, (sha, raw_sha, cleaned_head) in enumerate(steps):
            n = s * (pages // STEPS) + e
            assert sha == raw_sha == _sha(_page(n)[0]), (episode_id, s)  # the raw page, whole
            assert cleaned_head == _page(n)[1][:40]  # and its cleaned form beside it
