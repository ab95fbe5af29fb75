"""Rendering over several processes gives the same outcomes, in the same order, as one."""

from __future__ import annotations

from bundled import bundled_episodes

from bigaction_assets.sft.examples import ExampleSettings
from bigaction_assets.sft.parallel import (
    EPISODES_PER_CHUNK,
    PARALLEL_FROM_EPISODES,
    render_episodes,
    worker_count,
)


def test_two_workers_render_what_one_does_in_the_same_order():
    episodes = [(ep, events, pages) for _, ep, events, pages in bundled_episodes()]
    episodes = episodes * (2 * EPISODES_PER_CHUNK // len(episodes) + 1)  # several chunks
    settings = ExampleSettings(max_tokens=2048, observation_tokens=256)  # windows and skips
    alone = list(render_episodes(episodes, settings, workers=1))
    shared = list(render_episodes(episodes, settings, workers=2))
    assert [o.episode_id for o in shared] == [ep["episode_id"] for ep, _, _ in episodes]
    assert [(o.rows, o.skipped and o.skipped.reason) for o in shared] == [
        (o.rows, o.skipped and o.skipped.reason) for o in alone
    ]
    assert any(o.skipped for o in alone) and any(len(o.rows) > 1 for o in alone)


def test_worker_count():
    assert worker_count(3, 10) == 3
    assert worker_count(0, PARALLEL_FROM_EPISODES - 1) == 1
    assert worker_count(0, PARALLEL_FROM_EPISODES) >= 1
