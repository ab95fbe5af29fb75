"""Episodes rendered into examples over several processes, results kept in input order.

Rendering is per episode and needs nothing from other episodes, so it spreads over cores;
reading the lake and writing the partition stay in the calling process. Chunks of episodes go
to worker processes and come back in the order they were sent, so the output is the same bytes
whatever the number of workers, and at most a few chunks are in flight, so memory stays flat.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any

from bigaction_assets.sft.examples import EpisodeSkipped, ExampleSettings, episode_examples

Episode = tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]
EPISODES_PER_CHUNK = 32
CHUNKS_IN_FLIGHT_PER_WORKER = 2
# Below this many episodes, starting worker processes costs more than it saves.
PARALLEL_FROM_EPISODES = 1_000


@dataclass(frozen=True)
class Outcome:
    """One episode's examples, or why it has none."""

    episode_id: str
    rows: list[dict[str, Any]]
    skipped: EpisodeSkipped | None = None


def render_episode(episode: Episode, settings: ExampleSettings) -> Outcome:
    record, events, pages = episode
    try:
        return Outcome(record["episode_id"], episode_examples(record, events, pages, settings))
    except EpisodeSkipped as skip:
        return Outcome(record["episode_id"], [], skip)


def _render_chunk(chunk: list[Episode], settings: ExampleSettings) -> list[Outcome]:
    return [render_episode(episode, settings) for episode in chunk]


def worker_count(requested: int, episodes: int) -> int:
    """`requested` workers, or with 0 one per core when the partition is big enough to gain."""
    if requested > 0:
        return requested
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1) if episodes >= PARALLEL_FROM_EPISODES else 1


def render_episodes(
    episodes: Iterable[Episode], settings: ExampleSettings, workers: int = 1
) -> Iterator[Outcome]:
    """An `Outcome` per episode, in input order, rendered by `workers` processes (1: here)."""
    if workers <= 1:
        for episode in episodes:
            yield render_episode(episode, settings)
        return
    source = iter(episodes)
    # spawn, not fork: the caller may be a Dagster process with threads running
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending: deque[Future[list[Outcome]]] = deque()
        while True:
            while len(pending) < workers * CHUNKS_IN_FLIGHT_PER_WORKER:
                chunk = list(islice(source, EPISODES_PER_CHUNK))
                if not chunk:
                    break
                pending.append(pool.submit(_render_chunk, chunk, settings))
            if not pending:
                return
            yield from pending.popleft().result()
