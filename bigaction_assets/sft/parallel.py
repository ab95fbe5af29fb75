"""Chunks of episodes rendered into example tables over several processes, kept in input order.

Rendering is per episode and needs nothing from other episodes, so it spreads over cores. The
calling process reads the lake into chunks (`episodes.reader.iter_chunks`: Arrow tables) and
writes what comes back; a worker turns a chunk into Python rows, renders every episode and
builds the chunk's Arrow table of examples, so no row dict crosses a process boundary either
way, and the tables themselves cross as memory-mapped files (`handoff`), not through the pipe.
Results come back in the order sent, so the output is the same bytes whatever the number of
workers, and at most a few chunks are in flight, so memory stays flat."""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from bigaction_assets.arrow_arrays import text_array_from_utf8
from bigaction_assets.clean_spawn import clean_spawn_context
from bigaction_assets.episodes.chunks import Episode, EpisodeChunk
from bigaction_assets.gc_pause import collection_paused
from bigaction_assets.sft.examples import EpisodeSkipped, ExampleSettings, episode_examples
from bigaction_assets.sft.formats import SFT_FORMATS
from bigaction_assets.sft.handoff import (
    ChunkFiles,
    put_chunk,
    put_table,
    scratch_folder,
    take_chunk,
    take_table,
)
from bigaction_assets.sft.observations import observations_ahead
from bigaction_assets.sft.worker_start import start_worker

CHUNKS_IN_FLIGHT_PER_WORKER = 2
# Below this many episodes, starting worker processes costs more than it saves (measured:
# 2 workers were slower at 1,000 ADP episodes, 1.45x faster at 10,000; break-even ~1,700).
PARALLEL_FROM_EPISODES = 4_000


@dataclass(frozen=True)
class Outcome:
    """One episode's examples, or why it has none."""

    episode_id: str
    rows: list[dict[str, Any]]
    skipped: EpisodeSkipped | None = None


@dataclass(frozen=True)
class ChunkOutcome:
    """A chunk's examples, in episode order, and the episodes that gave none.

    `table` holds the examples in the contract's Arrow schema; where Arrow would not take a
    value as it is (a renderer bug), it is None and `rows` holds them, for the contract to say
    what is wrong.
    """

    episodes: int
    table: pa.Table | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[tuple[str, EpisodeSkipped]] = field(default_factory=list)
    table_file: Path | None = None
    """Where a worker put `table` for the calling process to map (`handoff`)."""


def render_episode(
    episode: Episode, settings: ExampleSettings, shown: Mapping[int, str] | None = None
) -> Outcome:
    record, events, pages = episode
    try:
        rows = episode_examples(record, events, pages, settings, shown)
    except EpisodeSkipped as skip:
        return Outcome(record["episode_id"], [], skip)
    return Outcome(record["episode_id"], rows)


def render_chunk(chunk: EpisodeChunk, settings: ExampleSettings, schema: pa.Schema) -> ChunkOutcome:
    """Every episode of the chunk rendered, its examples as one table of `schema`."""
    rows: list[dict[str, Any]] = []
    skipped: list[tuple[str, EpisodeSkipped]] = []
    with collection_paused():  # events, turns and rows are acyclic: refcounting frees them
        episodes = list(chunk.episode_rows())
        shown = observations_ahead(
            ((events, pages) for _, events, pages in episodes),
            settings.observation_tokens,
            settings.representation,
        )
        for episode in episodes:
            outcome = render_episode(episode, settings, shown)
            rows += outcome.rows
            if outcome.skipped is not None:
                skipped.append((outcome.episode_id, outcome.skipped))
    if any(len(row) != len(schema) for row in rows):  # keys the contract lacks: let it name them
        return ChunkOutcome(len(chunk), None, rows, skipped)
    try:
        columns = [_column([row[field.name] for row in rows], field) for field in schema]
        table = pa.Table.from_arrays(columns, schema=schema)
    except (KeyError, pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        return ChunkOutcome(len(chunk), None, rows, skipped)
    return ChunkOutcome(len(chunk), table, [], skipped)


def _column(values: list[Any], field: pa.Field) -> list[Any] | pa.Array:
    """A column of examples as Arrow takes it: the renderings, JSON in UTF-8 bytes, as text
    built from those bytes (`text_array_from_utf8`: checked as UTF-8, as Arrow's builder checks
    them, without decoding each into a Python string), the rest as lists."""
    if field.name in SFT_FORMATS:
        return text_array_from_utf8(values, field.type)
    return values


def render_chunk_files(
    files: ChunkFiles, settings: ExampleSettings, schema: pa.Schema
) -> ChunkOutcome:
    """`render_chunk` in a worker: the chunk taken from its files, the examples' table put
    beside them."""
    outcome = render_chunk(take_chunk(files), settings, schema)
    if outcome.table is None:
        return outcome
    path = files.path("examples")
    put_table(outcome.table, path)
    return replace(outcome, table=None, table_file=path)


def worker_count(requested: int, episodes: int) -> int:
    """`requested` workers, or with 0 one per core when the partition is big enough to gain."""
    if requested > 0:
        return requested
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1) if episodes >= PARALLEL_FROM_EPISODES else 1


def render_chunks(
    chunks: Iterable[EpisodeChunk],
    settings: ExampleSettings,
    schema: pa.Schema,
    workers: int = 1,
    while_workers_start: Callable[[], object] | None = None,
) -> Iterator[ChunkOutcome]:
    """A `ChunkOutcome` per chunk, in input order, rendered by `workers` processes (1: here).

    `while_workers_start`: called once the first chunks are sent, while the workers start
    (~0.5 s each of imports and the tokenizer's tables), when this process would only wait."""
    if workers <= 1:
        for chunk in chunks:
            yield render_chunk(chunk, settings, schema)
        return
    source = iter(chunks)
    # spawn, not fork: the caller may be a Dagster process with threads running (and forks of
    # multiprocessing's fork server, preloaded, rendered ~60% slower per chunk: measured); and
    # not from the caller's main module, which is Dagster's CLI in a run (`clean_spawn`)
    with (
        scratch_folder() as scratch,
        ProcessPoolExecutor(
            max_workers=workers, mp_context=clean_spawn_context(), initializer=start_worker
        ) as pool,
    ):
        # A pool starts a process per task submitted while none is idle: start them all now,
        # so they import and load the tokenizer while this process reads the first chunks
        # (`worker_start`).
        for _ in range(workers):
            pool.submit(int)
        pending: deque[Future[ChunkOutcome]] = deque()
        numbers = itertools.count()
        while True:
            while len(pending) < workers * CHUNKS_IN_FLIGHT_PER_WORKER:
                chunk = next(source, None)
                if chunk is None:
                    break
                files = put_chunk(chunk, scratch / str(next(numbers)))
                pending.append(pool.submit(render_chunk_files, files, settings, schema))
            if while_workers_start is not None:
                while_workers_start()
                while_workers_start = None
            if not pending:
                return
            done = pending.popleft().result()
            if done.table_file is not None:
                done = replace(done, table=take_table(done.table_file), table_file=None)
            yield done
