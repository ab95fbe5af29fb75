"""A lake partition of Mind2Web-sized pages (hundreds of megabytes, in row groups the size
ingest writes) for tests of readers that must not hold them all."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.lake import partition_path
from bigaction_assets.lake_writer import open_partition

KEY = "mind2web.big_pages"
PAGE_KB = 384  # a Mind2Web raw page runs to hundreds of kilobytes
PAGES_PER_GROUP = 160  # ~64 MB of raw HTML a row group, as ingest's sinks write them
GROUPS = 8
STEPS = 5


def page(n: int) -> tuple[str, str]:
    """A page's raw HTML and its cleaned form, each distinct (they compress to almost nothing,
    so the files stay small while the pages in memory do not)."""
    body = f"<div class='row{n % 7}'>item</div>" * (PAGE_KB * 1024 // 32)
    raw = f"<html><!-- page {n} -->{body}</html>"
    return raw, f"<html><!-- cleaned {n} -->{body[: len(body) // 4]}</html>"


def sha(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def write_big_pages(lake: Path, key: str = KEY) -> None:
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
                "html_sha": [sha(page(n)[0]) for n in order],
            },
            schema={"episode_id": pl.String, "idx": pl.Int32, "html_sha": pl.String},
        ),
    }
    for asset, table in tables.items():
        path = partition_path(lake, "standardized", asset, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        table.write_parquet(path)
    schema = pa.schema(
        [("html_sha", pa.large_string()), ("raw_html", pa.large_string()),
         ("cleaned_html", pa.large_string())]
    )  # fmt: skip
    # through the lake's own writer, a sink's batch at a time, as ingest writes pages
    with open_partition(lake, "standardized", "dom_snapshots", key, schema) as writer:
        for group in range(GROUPS):
            numbers = range(group * PAGES_PER_GROUP, (group + 1) * PAGES_PER_GROUP)
            raw, cleaned = zip(*(page(n) for n in numbers), strict=True)
            columns = [[sha(r) for r in raw], list(raw), list(cleaned)]
            writer.write(pa.table(columns, schema=schema))
    file = pq.ParquetFile(partition_path(lake, "standardized", "dom_snapshots", key))
    assert file.num_row_groups == GROUPS
