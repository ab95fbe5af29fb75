"""One dataset's episodes back from the lake with what the benchmark needs: candidates, pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bigaction_assets.episodes.reader import iter_episodes
from bigaction_assets.lake import Lake, partition_exists, partition_url
from bigaction_assets.lake_reader import open_parquet
from bigaction_assets.lake_sql import query_connection

GROUP = "standardized"
EPISODES_PER_BATCH = 64
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


def _pages(lake: Lake, key: str, shas: list[str]) -> Pages:
    """Pages one at a time per episode: a step's raw HTML runs to megabytes."""
    path = _file(lake, "dom_snapshots", key)
    if path is None or not shas:
        return {}
    with query_connection(lake) as con:
        rows = con.execute(
            f"""select html_sha, raw_html, cleaned_html from read_parquet('{path}')
            where html_sha in (select unnest(?))""",
            [shas],
        ).fetchall()
    return {sha: (raw, cleaned) for sha, raw, cleaned in rows}


def iter_benchmark_episodes(lake: Lake, key: str) -> Iterator[Item]:
    """(episode, events, web candidates, pages by html_sha) for every episode of a partition,
    in source order; candidates are fetched a batch of episodes at a time, pages per episode."""
    batch: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []

    def flush() -> Iterator[Item]:
        candidates = _candidates(lake, key, [episode["episode_id"] for episode, _ in batch])
        for episode, events in batch:
            shas = sorted({e["html_sha"] for e in events if e.get("html_sha")})
            pages = _pages(lake, key, shas)
            yield episode, events, candidates.get(episode["episode_id"], []), pages
        batch.clear()

    for episode, events, _ in iter_episodes(lake, key, with_pages=False):
        batch.append((episode, events))
        if len(batch) >= EPISODES_PER_BATCH:
            yield from flush()
    yield from flush()


def snapshot_rows(lake: Lake, key: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    """`columns` of one `benchmark_snapshot` partition, a row group at a time (none if absent)."""
    parquet = open_parquet(lake, "benchmark", "benchmark_snapshot", key)
    if parquet is None:
        return
    for index in range(parquet.num_row_groups):
        yield from parquet.read_row_group(index, columns=columns).to_pylist()
