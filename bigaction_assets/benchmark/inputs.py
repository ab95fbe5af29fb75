"""One dataset's episodes back from the lake with what the benchmark needs: candidates, pages."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow.compute as pc

from bigaction_assets.episodes.pages import PageReader
from bigaction_assets.episodes.reader import EpisodeChunk, iter_chunks
from bigaction_assets.lake import Lake, partition_exists, partition_url
from bigaction_assets.lake_reader import iter_row_groups, open_parquet
from bigaction_assets.lake_sql import query_connection

GROUP = "standardized"
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
    in source order, a chunk of episodes at a time as the episodes reader cuts them (at most
    256 episodes showing about 64 pages): the chunk's candidates in one query, its pages, raw
    and cleaned, in one `PageReader` call, which keeps only the wanted rows of each row group.
    (A DuckDB query by hash per episode read every row group of the file and ran out of its
    memory limit on pages a few hundred kilobytes each: benchmarks/README.md,
    "`benchmark_snapshot.py`".)"""
    reader = PageReader(open_parquet(lake, GROUP, "dom_snapshots", key))
    for chunk in iter_chunks(lake, key, with_pages=False):
        yield from _chunk_items(lake, key, chunk, reader)


def names_operations(lake: Lake, key: str) -> bool:
    """Whether an action of the partition may name its operation (`extra.op`, what makes a
    step a benchmark step, `steps.benchmark_steps`): an `api_action` whose `extra` JSON text
    holds the key `"op"`. Two columns of the events are read, a row group at a time; a match
    can be a false alarm (`"op"` deeper in the JSON), never a miss."""
    if not partition_exists(lake, GROUP, "events", key):
        return False
    for events in iter_row_groups(lake, GROUP, "events", key, ["kind", "extra"]):
        named = pc.and_(
            pc.equal(events["kind"], "api_action"), pc.match_substring(events["extra"], '"op"')
        )
        if pc.any(named).as_py():
            return True
    return False


def _chunk_items(lake: Lake, key: str, chunk: EpisodeChunk, reader: PageReader) -> Iterator[Item]:
    """The chunk's items; its pages are let go when it is done, before the next chunk's are
    read."""
    rows = list(chunk.episode_rows())
    candidates = _candidates(lake, key, [episode["episode_id"] for episode, _, _ in rows])
    shown = sorted({e["html_sha"] for _, events, _ in rows for e in events if e.get("html_sha")})
    pages = reader.raw_and_cleaned(shown) if shown else {}
    for episode, events, _ in rows:
        theirs = {e["html_sha"]: pages[e["html_sha"]] for e in events if e.get("html_sha") in pages}
        yield episode, events, candidates.get(episode["episode_id"], []), theirs


def snapshot_rows(lake: Lake, key: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    """`columns` of one `benchmark_snapshot` partition, a row group at a time (none if absent)."""
    parquet = open_parquet(lake, "benchmark", "benchmark_snapshot", key)
    if parquet is None:
        return
    for index in range(parquet.num_row_groups):
        yield from parquet.read_row_group(index, columns=columns).to_pylist()
