"""Export standardized episodes back to ADP JSONL (`python -m bigaction_assets.adp_export`)."""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import orjson

from bigaction_assets.episodes.pages import PageReader
from bigaction_assets.images.store import iter_images
from bigaction_assets.lake_reader import open_parquet
from bigaction_assets.lake_sql import query_connection
from bigaction_assets.quality import has_table, relation
from bigaction_assets.settings import Paths
from bigaction_assets.sources.adp_codec_export import export_trajectory

EPISODES_PER_BATCH = 200
PAGES_PER_RUN = 64
GROUP = "standardized"


def iter_trajectories(lake: Path, dataset: str) -> Iterator[dict[str, Any]]:
    """ADP trajectories of one dataset (a partition key such as `adp.synatra`), in source order.

    Everything is read from the dataset's own partition (its episodes carry its key as their
    `dataset`, and it stores every page and image its events show): other datasets in the
    lake, however large, are not read. Episode rows are small and read at once; their events,
    pages and inline images, which are not, a batch of episodes at a time, the pages through a
    `PageReader` (a query by hash over every page in the lake ran out of DuckDB's memory limit
    once one dataset held a few hundred megabytes of pages).
    """
    if not has_table(lake, "episodes", GROUP, dataset):
        return
    pages = PageReader(open_parquet(lake, GROUP, "dom_snapshots", dataset))
    with query_connection() as con:
        episodes = con.execute(
            f"""select * from {relation(lake, "episodes", GROUP, dataset)} where dataset = ?
            order by source_file, source_record""",
            [dataset],
        )
        names = [d[0] for d in episodes.description]
        rows = [dict(zip(names, row, strict=True)) for row in episodes.fetchall()]
        for start in range(0, len(rows), EPISODES_PER_BATCH):
            batch = rows[start : start + EPISODES_PER_BATCH]
            events = _events(con, lake, dataset, [row["episode_id"] for row in batch])
            for run in _runs_of_pages(batch, events):
                found = pages.raw(sorted(_shown(run, events)))
                for episode in run:
                    episode_events = events.get(episode["episode_id"], [])
                    html = {s: found.get(s) for s in _shown([episode], events)}
                    theirs = {sha: page for sha, page in html.items() if page is not None}
                    yield export_trajectory(episode, episode_events, theirs)


def _shown(episodes: list[dict[str, Any]], events: dict[str, list[dict[str, Any]]]) -> set[str]:
    """The pages these episodes' events show."""
    return {
        e["html_sha"] for ep in episodes for e in events.get(ep["episode_id"], []) if e["html_sha"]
    }


def _runs_of_pages(
    episodes: list[dict[str, Any]], events: dict[str, list[dict[str, Any]]]
) -> Iterator[list[dict[str, Any]]]:
    """The episodes in runs showing about `PAGES_PER_RUN` pages: their pages are held together,
    and a raw page runs to megabytes."""
    run: list[dict[str, Any]] = []
    shown: set[str] = set()
    for episode in episodes:
        run.append(episode)
        shown |= _shown([episode], events)
        if len(shown) >= PAGES_PER_RUN:
            yield run
            run, shown = [], set()
    if run:
        yield run


def _events(
    con: duckdb.DuckDBPyConnection, lake: Path, dataset: str, episode_ids: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """The events of these episodes in order, each with `image_bytes`: the bytes of an image
    the record held inline (no `image_path`), from the dataset's `images` (read by row group
    through `images.store`, not gathered by DuckDB: screenshots run to megabytes too)."""
    if not has_table(lake, "events", GROUP, dataset):
        return {}
    cursor = con.execute(
        f"""select * from {relation(lake, "events", GROUP, dataset)}
        where episode_id in (select unnest(?)) order by episode_id, idx""",
        [episode_ids],
    )
    names = [d[0] for d in cursor.description]
    grouped: dict[str, list[dict[str, Any]]] = {}
    inline: set[str] = set()
    for row in cursor.fetchall():
        event = dict(zip(names, row, strict=True))
        grouped.setdefault(event["episode_id"], []).append(event)
        if event.get("image_sha") and event.get("image_path") is None:
            inline.add(event["image_sha"])
    images = {
        row["image_sha"]: row["bytes"]
        for row in iter_images(lake, inline, partitions=[dataset])
    } if inline else {}  # fmt: skip
    for group in grouped.values():
        for event in group:
            inline_image = event.get("image_sha") and event.get("image_path") is None
            event["image_bytes"] = images.get(event["image_sha"]) if inline_image else None
    return grouped


def export_dataset(lake: Path, dataset: str, out: Path) -> int:
    """Write one dataset as ADP JSONL, atomically; returns the number of trajectories."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    count = 0
    with open(tmp, "wb") as handle:
        for trajectory in iter_trajectories(lake, dataset):
            handle.write(orjson.dumps(trajectory) + b"\n")
            count += 1
    os.replace(tmp, out)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", help="partition key, e.g. adp.synatra")
    parser.add_argument("out", type=Path, help="JSONL file to write")
    args = parser.parse_args(argv)
    count = export_dataset(Paths.from_env().lake, args.dataset, args.out)
    print(f"wrote {count} trajectories to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
