"""Reading standardized episodes back from the lake: which datasets it holds, and one dataset's
episodes a chunk at a time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa

from bigaction_assets.episodes.chunks import (
    Episode,
    EpisodeChunk,
    EventCursor,
    EventsOutOfOrder,
)
from bigaction_assets.episodes.pages import PageReader
from bigaction_assets.lake import Lake, partition_exists, partition_file, table_dir
from bigaction_assets.lake_reader import (
    iter_partition_batches,
    iter_row_groups,
    open_parquet,
    read_arrow,
    table_files,
)
from bigaction_assets.lake_rows import footer_rows
from bigaction_assets.lake_sql import query_connection
from bigaction_assets.thought_table import generated_thoughts, has_thoughts

__all__ = [
    "Episode",
    "EpisodeChunk",
    "EventsOutOfOrder",
    "iter_chunks",
    "iter_episodes",
    "standardized_datasets",
]

EPISODES_PER_BATCH = 256
# Pages of a batch are held in memory together; raw pages run to megabytes, so a batch also
# ends once its episodes show this many distinct pages.
PAGES_PER_BATCH = 64
# A chunk's events also bound what a worker holds and sends back (each is rendered into every
# format): ~170 episodes of swe-smith's ~50 events. Measured on swe-smith x5,000 with 2 workers:
# 512 a chunk cost the dataset's process 13 CPU s in chunk traffic, 2,048 cost 5, 8,192 cost 3
# (as unbounded, for 200 MB less peak memory).
EVENTS_PER_CHUNK = 8_192
GROUP = "standardized"


def standardized_datasets(lake: Lake) -> list[str]:
    """The partition keys of the `episodes` table, sorted: every dataset (or shard) standardized."""
    if not isinstance(lake, Path):
        files = table_files(lake, GROUP, "episodes")
        return sorted(str(f).rsplit("/", 1)[-1].removesuffix(".parquet") for f in files)
    folder = table_dir(lake, GROUP, "episodes")
    return sorted(p.stem for p in folder.glob("*.parquet")) if folder.is_dir() else []


def image_names(lake: Lake, key: str) -> dict[str, str]:
    """`{image_sha: "<image_sha>.<format>"}` for the partition's images: the name an example
    refers to a screenshot by (two short columns; the bytes are not read)."""
    if not partition_exists(lake, GROUP, "images", key):
        return {}
    table = read_arrow(lake, GROUP, "images", key, ["image_sha", "format"])
    shas, formats = table["image_sha"].to_pylist(), table["format"].to_pylist()
    return {sha: f"{sha}.{fmt}" for sha, fmt in zip(shas, formats, strict=True)}


def episode_count(lake: Lake, key: str) -> int:
    """Episodes in a partition, from the Parquet footer (no row is read)."""
    return footer_rows(lake, partition_file(lake, GROUP, "episodes", key))


def iter_chunks(
    lake: Lake, key: str, with_pages: bool = True, with_generated_thoughts: bool = False
) -> Iterator[EpisodeChunk]:
    """The partition's episodes in the order written (source order), in chunks of at most
    `EPISODES_PER_BATCH` episodes holding about `PAGES_PER_BATCH` pages or `EVENTS_PER_CHUNK`
    events, each with its events (both files read once, in step: the standardize step writes
    each episode's events together, in the episodes' order, so no sort and no search is needed
    whatever their size), the pages they show (cleaned HTML where the source has it, else
    raw), with `with_generated_thoughts` the thoughts the `thoughts` table generated for them,
    and the names of their screenshots.

    Raises:
        EventsOutOfOrder: an event is not where that order puts it. The whole events file has
            then been walked, with no memory of the episodes seen: the run fails at the end,
            and the caller writes nothing.
    """
    reader = PageReader(open_parquet(lake, GROUP, "dom_snapshots", key)) if with_pages else None
    names = image_names(lake, key)
    events = EventCursor(iter_row_groups(lake, GROUP, "events", key))
    with_generated_thoughts = with_generated_thoughts and has_thoughts(lake, key)
    with query_connection(lake) as con:
        for batch in iter_partition_batches(lake, GROUP, "episodes", key, EPISODES_PER_BATCH):
            ids = batch.column("episode_id").to_pylist()
            start, shas = 0, set[str]()
            for end, episode_id in enumerate(ids, start=1):
                shas |= events.take(episode_id)
                full = len(shas) >= PAGES_PER_BATCH or events.taken >= EVENTS_PER_CHUNK
                if end == len(ids) or full:
                    yield _chunk(
                        batch.slice(start, end - start), events.cut(), shas, reader, names,
                        (con, lake, key) if with_generated_thoughts else None,
                    )  # fmt: skip
                    start, shas = end, set()
        events.finish()


def _chunk(
    episodes: pa.RecordBatch,
    events: pa.Table,
    shas: set[str],
    reader: PageReader | None,
    names: dict[str, str],
    thoughts_from: tuple[duckdb.DuckDBPyConnection, Lake, str] | None,
) -> EpisodeChunk:
    """The chunk of these episodes and events, with the pages, thoughts and names they need."""
    shown: dict[str, str] = {}
    if names and "image_sha" in events.column_names:  # most datasets have no image
        present = set(events.column("image_sha").to_pylist())
        shown = {sha: names[sha] for sha in present if sha in names}
    ids = episodes.column("episode_id").to_pylist()
    return EpisodeChunk(
        episodes=pa.Table.from_batches([episodes]).combine_chunks(),
        events=events,
        pages=reader.pages(sorted(shas)) if reader is not None and shas else {},
        thoughts=generated_thoughts(*thoughts_from, ids) if thoughts_from else {},
        image_names=shown,
    )


def iter_episodes(
    lake: Lake, key: str, with_pages: bool = True, with_generated_thoughts: bool = False
) -> Iterator[Episode]:
    """(episode, its events in order, its pages by html_sha) for every episode of a partition,
    in the order written, as `iter_chunks` reads them. An event whose screenshot is in `images`
    carries its file name (`conversation.IMAGE_NAME`); with `with_generated_thoughts`, an
    action with no recorded thought gets its generated one (marked `thought_generated`).

    Memory follows a chunk of episodes (at most 256, showing at most about 64 pages), not the
    partition.

    Raises:
        EventsOutOfOrder: the events file does not keep each episode's events together in the
            episodes' order (the standardize step always writes it so).
    """
    for chunk in iter_chunks(lake, key, with_pages, with_generated_thoughts):
        yield from chunk.episode_rows()
