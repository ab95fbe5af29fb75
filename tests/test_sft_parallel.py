"""Rendering over several processes gives the same tables, in the same order, as one."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pytest
from bundled import bundled_episodes

from bigaction_assets.schemas import ValueNotStorable, arrow_schema, validated_table
from bigaction_assets.schemas.sft import SftExampleSchema
from bigaction_assets.sft import handoff, parallel
from bigaction_assets.sft.episode_chunks import EpisodeChunk
from bigaction_assets.sft.examples import ExampleSettings
from bigaction_assets.sft.parallel import (
    PARALLEL_FROM_EPISODES,
    render_chunk,
    render_chunks,
    worker_count,
)

SCHEMA = arrow_schema(SftExampleSchema)


def chunks_of(samples, size: int) -> list[EpisodeChunk]:
    """The samples as chunks of `size` episodes, their tables built as the lake's reader
    gives them (episodes, then each episode's events in order)."""
    chunks = []
    for start in range(0, len(samples), size):
        part = samples[start : start + size]
        pages = {sha: page for *_, shown in part for sha, page in shown.items()}
        chunks.append(
            EpisodeChunk(
                episodes=pa.Table.from_pylist([episode for _, episode, _, _ in part]),
                events=pa.Table.from_pylist([e for _, _, events, _ in part for e in events]),
                pages=pages,
            )
        )
    return chunks


def test_two_workers_render_what_one_does_in_the_same_order(tmp_path, monkeypatch):
    monkeypatch.setattr(handoff, "scratch_root", lambda: tmp_path)
    chunks = chunks_of(bundled_episodes() * 3, 7)  # several chunks for each worker
    settings = ExampleSettings(max_tokens=2048, observation_tokens=256)  # windows and skips
    alone = list(render_chunks(chunks, settings, SCHEMA, workers=1))
    shared = list(render_chunks(chunks, settings, SCHEMA, workers=2))
    assert list(tmp_path.iterdir()) == []  # the handoff files and their folder are gone
    assert [o.episodes for o in shared] == [len(chunk) for chunk in chunks]
    for one, two in zip(alone, shared, strict=True):
        assert one.table is not None and two.table is not None
        assert two.table.equals(one.table)
        assert [(e, s.reason) for e, s in two.skipped] == [(e, s.reason) for e, s in one.skipped]
    assert any(o.skipped for o in alone)
    windows = pa.concat_tables([o.table for o in alone])["windows"].to_pylist()
    assert max(windows) > 1
    episodes = {episode["episode_id"] for _, episode, _, _ in bundled_episodes()}
    example_episodes = set(pa.concat_tables([o.table for o in alone])["episode_id"].to_pylist())
    skipped = {e for o in alone for e, _ in o.skipped}
    assert example_episodes | skipped == episodes  # every episode gives examples or a reason


def test_rows_arrow_refuses_come_back_for_the_contract_to_name(monkeypatch):
    [chunk] = chunks_of(bundled_episodes()[:1], 1)
    good = render_chunk(chunk, ExampleSettings(), SCHEMA)
    assert good.table is not None and good.table.num_rows >= 1
    broken = [{**row, "tokens": 2**40} for row in good.table.to_pylist()]
    monkeypatch.setattr(parallel, "episode_examples", lambda *_: broken)
    outcome = render_chunk(chunk, ExampleSettings(), SCHEMA)
    assert outcome.table is None and outcome.rows == broken
    with pytest.raises(ValueNotStorable, match="tokens"):
        validated_table(SftExampleSchema, outcome.rows)


def test_worker_count():
    assert worker_count(3, 10) == 3
    assert worker_count(0, PARALLEL_FROM_EPISODES - 1) == 1
    assert worker_count(0, PARALLEL_FROM_EPISODES) >= 1


def test_a_worker_imports_neither_the_contracts_nor_the_lake():
    """A spawned worker imports what rendering needs: pandera and Polars cost it ~1 s to
    start (as they did when a constant of the contracts' module was imported from there)."""
    heavy = ("pandera", "polars", "pandas", "duckdb", "dagster")
    code = (
        "import sys, bigaction_assets.sft.parallel\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_caller_works_once_while_the_workers_start():
    chunks = chunks_of(bundled_episodes()[:6], 2)
    calls: list[int] = []
    outcomes = render_chunks(
        chunks, ExampleSettings(), SCHEMA, workers=2, while_workers_start=lambda: calls.append(1)
    )
    first = next(outcomes)
    assert calls == [1] and first.episodes == 2
    assert [o.episodes for o in outcomes] == [2, 2]
    assert calls == [1]
