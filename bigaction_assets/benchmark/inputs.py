"""One dataset's episodes back from the lake with what the benchmark needs: candidates, pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bigaction_assets.episodes.pages import PageReader
from bigaction_assets.episodes.reader import iter_episodes
from bigaction_assets.lake import Lake, partition_exists, partition_url
from bigaction_assets.lake_reader import open_parquet
from bigaction_assets.lake_sql import query_connection

GROUP = "standardized"
EPISODES_PER_BATCH = 64
# Pages of a batch are held together; a raw page runs to megabytes.
PAGES_PER_BATCH = 64
Pages = dict[str, tuple[str | None, str | None]]
Item = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], Pages]


def _file(lake: Lake, asset: str, key: str) -> str | None:
    if not partition_exists(lake, GROUP, asset, key):
        return None
    return partition_url(lake, GROUP, asset, key).replace("'", "''")


def _candidates(lake: Lake, key: str, ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    path = _file(lake, "web_candidates", key)
    if path is None:
        return {}
    with query_connection(lake) as con:
        cursor = con.execute(
            f"""select episode_id, step, backend_node_id, positive, is_original_target
            from read_parquet('{path}') where episode_id in (select unnest(?))""",
            [ids],
        )
        names = [d[0] for d in cursor.description]
        found: dict[str, list[dict[str, Any]]] = {}
        for row in cursor.fetchall():
            record = dict(zip(names, row, strict=True))
            found.setdefault(record["episode_id"], []).append(record)
    return found


def iter_benchmark_episodes(lake: Lake, key: str) -> Iterator[Item]:
    """(episode, events, web candidates, pages by html_sha) for every episode of a partition,
    in source order. Candidates and pages are fetched a batch of episodes at a time: at most
    `EPISODES_PER_BATCH` episodes showing about `PAGES_PER_BATCH` pages.

    Pages come through a `PageReader`, which keeps only the wanted rows of each row group: a
    DuckDB query by hash read every row group of the file for each episode and ran out of its
    memory limit on row groups of pages a few hundred kilobytes each (benchmarks/README.md,
    "`benchmark_snapshot.py`")."""
    batch: list[tuple[dict[str, Any], list[dict[str, Any]], list[str]]] = []
    shown: set[str] = set()
    reader = PageReader(open_parquet(lake, GROUP, "dom_snapshots", key))

    def flush() -> Iterator[Item]:
        candidates = _candidates(lake, key, [episode["episode_id"] for episode, _, _ in batch])
        pages = reader.raw_and_cleaned(sorted(shown)) if shown else {}
        for episode, events, shas in batch:
            theirs = {sha: pages[sha] for sha in shas if sha in pages}
            yield episode, events, candidates.get(episode["episode_id"], []), theirs
        batch.clear()
        shown.clear()

    for episode, events, _ in iter_episodes(lake, key, with_pages=False):
        shas = sorted({e["html_sha"] for e in events if e.get("html_sha")})
        batch.append((episode, events, shas))
        shown.update(shas)
        if len(batch) >= EPISODES_PER_BATCH or len(shown) >= PAGES_PER_BATCH:
            yield from flush()
    if batch:
        yield from flush()


def snapshot_rows(lake: Lake, key: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    """`columns` of one `benchmark_snapshot` partition, a row group at a time (none if absent)."""
    parquet = open_parquet(lake, "benchmark", "benchmark_snapshot", key)
    if parquet is None:
        return
    for index in range(parquet.num_row_groups):
        yield from parquet.read_row_group(index, columns=columns).to_pylist()
