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

from bigaction_assets.lake_sql import query_connection
from bigaction_assets.quality import has_table, relation
from bigaction_assets.settings import Paths
from bigaction_assets.sources.adp_codec_export import export_trajectory

EPISODES_PER_BATCH = 200


def iter_trajectories(lake: Path, dataset: str) -> Iterator[dict[str, Any]]:
    """ADP trajectories of one dataset (a partition key such as `adp.synatra`), in source order.

    Episode rows are small and read at once; their events and pages, which are not, are read
    a batch of episodes at a time.
    """
    no_pages = "(select null::varchar as html_sha, null::varchar as raw_html)"
    # every dataset stores the pages it saw, so one page can be in several partitions
    one_per_sha = (
        f"(select html_sha, any_value(raw_html) as raw_html "
        f"from {relation(lake, 'dom_snapshots')} group by html_sha)"
    )
    pages = one_per_sha if has_table(lake, "dom_snapshots") else no_pages
    pages_sql = f"left join {pages} p using (html_sha)"
    if has_table(lake, "images"):  # the bytes of images the records held inline
        pages_sql += (
            f" left join (select image_sha, any_value(bytes) as image_bytes from "
            f"{relation(lake, 'images')} group by image_sha) i on i.image_sha = ev.image_sha "
            "and ev.image_path is null"
        )
    with query_connection() as con:
        episodes = con.execute(
            f"""select * from {relation(lake, "episodes")} where dataset = ?
            order by source_file, source_record""",
            [dataset],
        )
        names = [d[0] for d in episodes.description]
        rows = [dict(zip(names, row, strict=True)) for row in episodes.fetchall()]
        for start in range(0, len(rows), EPISODES_PER_BATCH):
            batch = rows[start : start + EPISODES_PER_BATCH]
            events = _events(con, lake, [row["episode_id"] for row in batch], pages_sql)
            for episode in batch:
                episode_events = events.get(episode["episode_id"], [])
                pages = {e["html_sha"]: e["raw_html"] for e in episode_events if e["html_sha"]}
                yield export_trajectory(episode, episode_events, pages)


def _events(
    con: duckdb.DuckDBPyConnection, lake: Path, episode_ids: list[str], pages_sql: str
) -> dict[str, list[dict[str, Any]]]:
    image_bytes = "i.image_bytes" if "image_bytes" in pages_sql else "null as image_bytes"
    cursor = con.execute(
        f"""select ev.*, p.raw_html, {image_bytes}
        from {relation(lake, "events")} ev {pages_sql}
        where ev.episode_id in (select unnest(?)) order by ev.episode_id, ev.idx""",
        [episode_ids],
    )
    names = [d[0] for d in cursor.description]
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in cursor.fetchall():
        event = dict(zip(names, row, strict=True))
        grouped.setdefault(event["episode_id"], []).append(event)
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
