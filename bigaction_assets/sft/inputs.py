"""Reading one dataset's standardized episodes back from the lake, a batch at a time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bigaction_assets.lake import (
    Lake,
    footer_rows,
    iter_partition_batches,
    open_parquet,
    partition_exists,
    partition_file,
    query_connection,
    read_arrow,
)
from bigaction_assets.sft.conversation import IMAGE_NAME
from bigaction_assets.sft.pages import PageReader
from bigaction_assets.thoughts.merge import add_generated_thoughts

EPISODES_PER_BATCH = 256
# Pages of a batch are held in memory together; raw pages run to megabytes, so a batch also
# ends once its episodes show this many distinct pages.
PAGES_PER_BATCH = 64
GROUP = "standardized"
Episode = tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]


class EventsOutOfOrder(ValueError):
    """The events file does not hold each episode's events together, in the episodes' order."""


def _rows(lake: Lake, asset: str, key: str) -> Iterator[dict[str, Any]]:
    for batch in iter_partition_batches(lake, GROUP, asset, key, EPISODES_PER_BATCH):
        yield from batch.to_pylist()


def _batches(lake: Lake, key: str) -> Iterator[list[tuple[dict[str, Any], list[dict[str, Any]]]]]:
    """(episode, events) in batches, reading both files once, in step, in the order written.

    The standardize step writes each episode's events together, in the order of the episodes;
    reading the two files side by side needs no sort and no search, whatever their size. An
    event that is not where that order puts it stops the reading at the end (the whole file has
    then been walked, with no memory of the episodes seen: the run fails, nothing is written).
    """
    events = _rows(lake, "events", key)
    pending = next(events, None)
    batch: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    pages: set[str] = set()
    for episode in _rows(lake, "episodes", key):
        episode_id = episode["episode_id"]
        own = []
        while pending is not None and pending["episode_id"] == episode_id:
            own.append(pending)
            pending = next(events, None)
        batch.append((episode, sorted(own, key=lambda event: event["idx"])))
        pages.update(event["html_sha"] for event in own if event["html_sha"])
        if len(batch) == EPISODES_PER_BATCH or len(pages) >= PAGES_PER_BATCH:
            yield batch
            batch, pages = [], set()
    if pending is not None:
        raise EventsOutOfOrder(
            f"events of {pending['episode_id']} are not where the episodes' order puts them "
            "(each episode's events together, episodes in order), or have no episode"
        )
    if batch:
        yield batch


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


def iter_episodes(
    lake: Lake, key: str, with_pages: bool = True, with_generated_thoughts: bool = False
) -> Iterator[Episode]:
    """(episode, its events in order, its pages by html_sha) for every episode of a partition,
    in the order written (source order). An event whose screenshot is in `images` carries its
    file name (`conversation.IMAGE_NAME`). Pages are the cleaned HTML where the source has it,
    else the raw HTML. With `with_generated_thoughts`, an action with no recorded thought gets
    its generated one from the `thoughts` table (marked `thought_generated`).

    Memory follows a batch of episodes (at most 256, showing at most about 64 pages), not the
    partition.

    Raises:
        EventsOutOfOrder: the events file does not keep each episode's events together in the
            episodes' order (the standardize step always writes it so).
    """
    reader = PageReader(open_parquet(lake, GROUP, "dom_snapshots", key)) if with_pages else None
    names = image_names(lake, key)
    with query_connection(lake) as con:
        for batch in _batches(lake, key):
            if with_generated_thoughts:
                add_generated_thoughts(con, lake, key, batch)
            for _, own in batch if names else ():  # most datasets have no image
                for event in own:
                    if event["image_sha"] in names:
                        event[IMAGE_NAME] = names[event["image_sha"]]
            shas = {event["html_sha"] for _, own in batch for event in own if event["html_sha"]}
            pages = reader.pages(sorted(shas)) if reader is not None else {}
            for episode, own in batch:
                mine = {e["html_sha"] for e in own if e["html_sha"]}
                yield episode, own, {sha: pages[sha] for sha in mine if sha in pages}
