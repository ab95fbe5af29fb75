"""Rendering over several processes gives the same tables, in the same order, as one."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pyarrow as pa
import pytest
from bundled import bundled_episodes

from bigaction_assets.clean_spawn import clean_spawn_context
from bigaction_assets.episodes.chunks import EpisodeChunk
from bigaction_assets.schemas import ValueNotStorable, arrow_schema, validated_table
from bigaction_assets.schemas.sft import SftExampleSchema
from bigaction_assets.sft import handoff, observations, parallel
from bigaction_assets.sft.conversation import is_agent_action
from bigaction_assets.sft.examples import EpisodeSkipped, ExampleSettings, episode_examples
from bigaction_assets.sft.observations import observations_ahead
from bigaction_assets.sft.parallel import (
    PARALLEL_FROM_EPISODES,
    render_chunk,
    render_chunks,
    worker_count,
)
from bigaction_assets.sft.worker_start import start_worker

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


HEAVY_IN_WORKER = (
    "sorted(m for m in ('pandas', 'pandera', 'polars', 'duckdb', 'dagster') "
    "if m in __import__('sys').modules)"
)


def modules_after_rendering(initializer) -> list[str]:
    """The heavy modules a clean worker holds once it has rendered a chunk and built its table."""
    [chunk] = chunks_of(bundled_episodes()[:2], 2)
    with ProcessPoolExecutor(1, mp_context=clean_spawn_context(), initializer=initializer) as pool:
        outcome = pool.submit(render_chunk, chunk, ExampleSettings(), SCHEMA).result()
        assert outcome.table is not None and outcome.table.num_rows >= 1
        return pool.submit(eval, HEAVY_IN_WORKER).result()


def test_a_worker_renders_without_importing_pandas():
    """pyarrow imports pandas the first time it converts a list (~0.45 s a worker)."""
    assert modules_after_rendering(start_worker) == []


def test_without_the_refusal_building_a_table_imports_pandas():
    """The cost `start_worker` removes, and that pandas is still installed for the other stages."""
    assert modules_after_rendering(None) == ["pandas"]


def test_the_refusal_is_as_if_the_module_were_not_installed():
    code = (
        "import sys\n"
        "from bigaction_assets.sft.worker_start import RefuseImports\n"
        "sys.meta_path.insert(0, RefuseImports(['pandas']))\n"
        "import pyarrow as pa\n"
        "assert pa.array(['a', None]).to_pylist() == ['a', None]\n"
        "try:\n"
        "    import pandas.core\n"
        "except ModuleNotFoundError as exc:\n"
        "    print(exc.name)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "pandas"  # the package is refused before its submodule


def test_a_chunk_renders_the_rows_each_episode_renders_alone():
    """Observations made ahead for the chunk (`observations_ahead`) change no byte: cut pages
    (a small budget), windows and skipped episodes included."""
    samples = bundled_episodes()
    settings = ExampleSettings(max_tokens=2048, observation_tokens=256)
    [chunk] = chunks_of(samples, len(samples))
    outcome = render_chunk(chunk, settings, SCHEMA)
    alone, skipped = [], []
    for record, events, pages in chunk.episode_rows():
        try:
            alone += episode_examples(record, events, pages, settings)
        except EpisodeSkipped as skip:
            skipped.append((record["episode_id"], skip.reason))
    assert outcome.table is not None and outcome.table.num_rows == len(alone) > 0
    assert outcome.table.equals(pa.Table.from_pylist(alone, schema=SCHEMA))
    assert [(e, s.reason) for e, s in outcome.skipped] == skipped


def test_the_episodes_read_their_observations_from_what_was_made_ahead(monkeypatch):
    samples = bundled_episodes()
    settings = ExampleSettings(observation_tokens=256)
    episodes = list(chunks_of(samples, len(samples))[0].episode_rows())
    fitted: list[str] = []
    real_fit = observations.fit_to_tokens
    monkeypatch.setattr(
        observations, "fit_to_tokens", lambda *a: fitted.append(a[0]) or real_fit(*a)
    )
    shown = observations_ahead(((ev, pages) for _, ev, pages in episodes), 256)
    made_ahead = len(fitted)
    assert made_ahead == len(shown) > 100
    fitted.clear()
    for record, events, pages in episodes:
        with contextlib.suppress(EpisodeSkipped):
            episode_examples(record, events, pages, settings, shown)
    # only an opening agent message that states the task is shown without being made ahead
    assert len(fitted) <= len(episodes) and len(fitted) < made_ahead / 10


def test_an_observation_that_cannot_be_made_ahead_is_left_to_its_episode(monkeypatch):
    """Made ahead, an error would stop the chunk where the episode's own rendering would have
    failed alone (or skipped the episode before it got there): it is left for that instead."""
    episodes = list(chunks_of(bundled_episodes()[:3], 3)[0].episode_rows())
    real_fit = observations.fit_to_tokens
    failed: list[str] = []

    def fit(text: str, budget: int) -> str:
        if not failed:
            failed.append(text)
            raise RuntimeError("cannot show this one")
        return real_fit(text, budget)

    monkeypatch.setattr(observations, "fit_to_tokens", fit)
    shown = observations_ahead(((ev, pages) for _, ev, pages in episodes), 256)
    shown_events = [e for _, ev, _ in episodes for e in ev if not is_agent_action(e)]
    assert failed and len(shown) == len(shown_events) - 1
    assert id(shown_events[0]) not in shown
