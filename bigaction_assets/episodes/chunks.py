"""Runs of a partition's episodes with their events, as Arrow tables that cross processes cheaply.

A chunk is what one worker renders: consecutive episodes, their events, and what those events
need from other tables (pages, generated thoughts, screenshot names). Its tables travel as column
buffers, not as millions of row dicts, and become Python rows where they are rendered
(`EpisodeChunk.episodes`), so reading the lake is all the calling process does per event.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.event_marks import GENERATED, IMAGE_NAME

Episode = tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]


class EventsOutOfOrder(ValueError):
    """The events file does not hold each episode's events together, in the episodes' order."""


@dataclass(frozen=True)
class EpisodeChunk:
    """Consecutive episodes of one partition and everything their rendering reads.

    Attributes:
        episodes: their `episodes` rows, in the order written.
        events: their `events` rows, each episode's together, in the episodes' order.
        pages: `{html_sha: page}` of the pages their events show.
        thoughts: `{(episode_id, idx): thought}` generated for actions with no recorded one.
        image_names: `{image_sha: file name}` of the screenshots their events show.
    """

    episodes: pa.Table
    events: pa.Table
    pages: dict[str, str] = field(default_factory=dict)
    thoughts: dict[tuple[str, int], str] = field(default_factory=dict)
    image_names: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.episodes.num_rows

    def episode_rows(self) -> Iterator[Episode]:
        """(episode, its events ordered by idx, its pages) for each episode, as Python rows."""
        events = self.events.to_pylist()
        at, end = 0, len(events)
        for episode in self.episodes.to_pylist():
            episode_id = episode["episode_id"]
            start = at
            while at < end and events[at]["episode_id"] == episode_id:
                at += 1
            own = sorted(events[start:at], key=lambda event: event["idx"])
            yield episode, self._completed(own), self._pages_of(own)

    def _completed(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Events with their generated thought (a recorded one is never replaced) and the
        name of their screenshot where `images` holds it."""
        for event in events:
            if self.thoughts and not (event.get("description") or "").strip():
                thought = self.thoughts.get((event["episode_id"], event["idx"]))
                if thought:
                    event["description"] = thought
                    event[GENERATED] = True
            if self.image_names and event.get("image_sha") in self.image_names:
                event[IMAGE_NAME] = self.image_names[event["image_sha"]]
        return events

    def _pages_of(self, events: list[dict[str, Any]]) -> dict[str, str]:
        if not self.pages:
            return {}
        shas = {event["html_sha"] for event in events if event.get("html_sha")}
        return {sha: self.pages[sha] for sha in shas if sha in self.pages}


@dataclass(frozen=True)
class _Runs:
    """A row group of the events file as runs of rows of one episode each."""

    table: pa.Table
    starts: list[int]
    """The first row of each run, then the row count."""
    ids: list[str]
    """The episode of each run."""
    shas: list[str | None] | None
    """Each row's page, where the table has pages."""

    @classmethod
    def of(cls, table: pa.Table) -> _Runs:
        rows = table.num_rows
        ids = table.column("episode_id").combine_chunks()
        starts = [0] if rows else []
        if rows > 1:  # where the episode changes from one row to the next
            changes = pc.indices_nonzero(pc.not_equal(ids[1:], ids[:-1])).to_pylist()
            starts += [change + 1 for change in changes]
        shas = table.column("html_sha").to_pylist() if "html_sha" in table.column_names else None
        run_ids = ids.take(pa.array(starts, pa.int64())).to_pylist()
        return cls(table, [*starts, rows], run_ids, shas)


class EventCursor:
    """The events file walked in step with the episodes file: `take(episode_id)` moves past
    that episode's rows (which must come next), `cut()` hands over the rows taken since the
    last cut as one contiguous table. Only the row groups of the open chunk are held, each
    as runs of one episode's rows, so the cursor moves an episode at a time."""

    def __init__(self, groups: Iterator[pa.Table]) -> None:
        self._groups = groups
        self._held: list[_Runs] = []  # row groups from the open chunk's first row on
        self._start = 0  # the open chunk's first row, in _held[0]
        self._group = 0  # the cursor: a row group of _held, and a run in it
        self._run = 0
        self.taken = 0  # rows taken since the last cut

    def _at_cursor(self) -> _Runs | None:
        while True:
            if self._group < len(self._held):
                runs = self._held[self._group]
                if self._run < len(runs.ids):
                    return runs
                self._group, self._run = self._group + 1, 0
                continue
            table = next(self._groups, None)
            if table is None:
                return None
            self._held.append(_Runs.of(table))

    def take(self, episode_id: str) -> set[str]:
        """Move past the episode's events; the pages they show."""
        pages: set[str] = set()
        while (runs := self._at_cursor()) is not None and runs.ids[self._run] == episode_id:
            start, end = runs.starts[self._run], runs.starts[self._run + 1]
            if runs.shas is not None:
                pages.update(sha for sha in runs.shas[start:end] if sha)
            self._run += 1
            self.taken += end - start
        return pages

    def cut(self) -> pa.Table:
        """The rows taken since the last cut, in one contiguous table (a slice would pickle
        its whole row group)."""
        pieces = []
        row = 0
        for number in range(min(self._group + 1, len(self._held))):
            runs = self._held[number]
            start = self._start if number == 0 else 0
            row = runs.starts[self._run] if number == self._group else runs.table.num_rows
            if row > start:
                pieces.append(runs.table.slice(start, row - start))
        schema = self._held[0].table.schema if self._held else pa.schema([])
        taken = pa.concat_tables(pieces).combine_chunks() if pieces else schema.empty_table()
        self._held = self._held[self._group :]  # earlier groups are done with
        self._group, self._start, self.taken = 0, row if self._held else 0, 0
        return taken

    def finish(self) -> None:
        """Raise if any event is left: it is out of the episodes' order, or has no episode."""
        runs = self._at_cursor()
        if runs is not None:
            raise EventsOutOfOrder(
                f"events of {runs.ids[self._run]} are not where the episodes' order puts them "
                "(each episode's events together, episodes in order), or have no episode"
            )
