"""The LLM call cache shared by every worker, on a real PostgreSQL started for the test: a rerun
through another connection calls nothing, concurrent writers never lose a finished call nor a
cent of spend, and erasure leaves no text of the forgotten subject in the table's file.

Skipped where PostgreSQL is not installed, unless BIGACTION_REQUIRE_CLUSTER=1 (`.ci/run`).
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import psycopg2
import pytest
from cluster_support import REQUIRED, services_missing
from llm_server import Reply, ScriptedServer
from test_llm_cache import must_be_polite, requests, run

from bigaction_assets.cluster import backing
from bigaction_assets.cluster.layout import ClusterLayout, ClusterState
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.llm.cache import CallKey, Spend, open_cache
from bigaction_assets.llm.cache_postgres import PostgresCallCache
from bigaction_assets.llm.caller import CallRequest
from bigaction_assets.llm.forget import erase_subjects, subjects_present


@pytest.fixture(scope="module")
def postgres() -> Iterator[tuple[ClusterLayout, ClusterState]]:
    missing = services_missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"BIGACTION_REQUIRE_CLUSTER=1 but {missing}")
        pytest.skip(missing)
    root = Path(tempfile.mkdtemp(prefix="bigaction-llm-cache-"))
    root.chmod(0o755)  # PostgreSQL runs as its own user and must reach its folder
    layout, state = ClusterLayout(data_dir=root, landing=root / "landing"), ClusterState.fresh()
    try:
        backing.start_postgres(layout, state)
        yield layout, state
    finally:
        backing.stop_postgres(layout)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def cache_url(postgres: tuple[ClusterLayout, ClusterState]) -> str:
    """A fresh database per test, as Dagster's URL setting spells it (`postgresql+psycopg2`)."""
    _, state = postgres
    name = f"cache_{uuid.uuid4().hex[:10]}"
    with closing(psycopg2.connect(state.libpq_url("postgres"))) as con:
        con.autocommit = True
        con.cursor().execute(f'create database "{name}"')
    return state.libpq_url(name).replace("postgresql://", "postgresql+psycopg2://", 1)


def test_the_resource_names_the_shared_cache_when_configured(cache_url: str) -> None:
    shared = LakeResource(landing_dir="/l", data_dir="/d", llm_cache_url=cache_url)
    assert shared.llm_cache == cache_url
    assert isinstance(open_cache(shared.llm_cache), PostgresCallCache)
    assert LakeResource(landing_dir="/l", data_dir="/d").llm_cache == Path("/d/llm/calls.sqlite")


def test_a_rerun_on_another_worker_calls_nothing(cache_url: str) -> None:
    with ScriptedServer() as server:
        first, caller = run(server.base_url, cache_url, requests(12), run_id="worker-1")
        assert len(server.requests) == 12 and caller.stats.completed == 12
        again, caller = run(server.base_url, cache_url, requests(12), run_id="worker-2")
        assert len(server.requests) == 12  # nothing new was asked
    assert caller.stats.cache_hits == 12 and all(o.from_cache for o in again)
    assert [o.output for o in again] == [o.output for o in first]


def test_a_failure_is_retried_in_later_runs_and_a_success_replaces_it(cache_url: str) -> None:
    with ScriptedServer(lambda _r: Reply(status=400)) as failing:
        [outcome], _ = run(failing.base_url, cache_url, requests(1))
    assert outcome.status == "failed" and outcome.reason == "http_400"
    with ScriptedServer() as server:
        [outcome], _ = run(server.base_url, cache_url, requests(1))
    assert outcome.status == "ok" and not outcome.from_cache
    with closing(psycopg2.connect(cache_url.replace("+psycopg2", ""))) as con:
        cursor = con.cursor()
        cursor.execute("select status, reason, failed_runs from calls")
        assert cursor.fetchall() == [("ok", None, 0)]


KEYS = [CallKey("m", f"prompt-{n:03d}", "p") for n in range(150)]


def test_concurrent_writers_never_lose_a_finished_call_or_spend(cache_url: str) -> None:
    """Three workers write the same 150 calls at once: two finish each call (answers `a`, `c`),
    one fails each; every call ends finished with the first answer, and every run's spend adds
    up exactly."""
    start = threading.Barrier(3)
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        try:
            with PostgresCallCache(cache_url) as cache:
                start.wait()
                for key in KEYS:
                    spend = Spend(1, 2, 0.5)
                    if name == "b":
                        cache.record_failure(key, "timeout", "", ["ep"], 1, spend, "run", spend)
                    else:
                        cache.record_ok(key, name, [f"ep-{name}"], 1, spend, "run", spend)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(name,)) for name in "abc"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with PostgresCallCache(cache_url) as cache:
        calls = cache.get_many(KEYS)
        assert len(calls) == len(KEYS)
        assert {call.status for call in calls.values()} == {"ok"}
        assert {call.output for call in calls.values()} <= {"a", "c"}
        assert all(call.failed_runs == 0 and call.reason is None for call in calls.values())
        assert cache.run_spend("run") == Spend(3 * 150, 6 * 150, 0.5 * 3 * 150)
        again = cache.get_many(KEYS)  # a finished call, once read, stays what it was
    assert {k: c.output for k, c in again.items()} == {k: c.output for k, c in calls.items()}


def test_a_later_failure_or_answer_never_replaces_a_finished_call(cache_url: str) -> None:
    key, spend = KEYS[0], Spend(1, 1, 0.0)
    with PostgresCallCache(cache_url) as cache:
        cache.record_ok(key, "first", ["ep"], 1, spend, "r", spend)
        cache.record_failure(key, "timeout", "", ["ep"], 1, spend, "r", spend)
        cache.record_ok(key, "second", ["ep"], 1, spend, "r", spend)
        call = cache.get(key)
    assert call is not None and (call.status, call.output) == ("ok", "first")


def test_a_stale_output_is_asked_again_and_replaced_on_the_shared_cache_too(
    cache_url: str,
) -> None:
    """The one output a later answer replaces: the one today's rules refuse (the statements are
    shared with SQLite, where `test_llm_cache.py` shows the same)."""
    with ScriptedServer(lambda r: Reply(content="fine" if r.number == 1 else "fine, please")) as s:
        [first], _ = run(s.base_url, cache_url, requests(1))
        [again], _ = run(s.base_url, cache_url, requests(1), validate=must_be_polite)
        [third], later = run(s.base_url, cache_url, requests(1), validate=must_be_polite)
    assert first.output == "fine" and again.output == "fine, please" and not again.from_cache
    assert third.from_cache and later.stats.requests == 0


def test_erasure_leaves_no_text_of_the_subject_in_the_table(
    cache_url: str, postgres: tuple[ClusterLayout, ClusterState]
) -> None:
    shared = CallRequest([{"role": "user", "content": "same prompt"}], ("alice/1",))
    echo = lambda request: Reply(content=f"I read: {request.last_user_text}")  # noqa: E731
    with ScriptedServer(echo) as server:
        run(server.base_url, cache_url, [*requests(3, "alice"), *requests(2, "bob"), shared])
        run(server.base_url, cache_url, [CallRequest(shared.messages, ("bob/9",))])
    alice = ["alice/0", "alice/1", "alice/2"]
    assert subjects_present(cache_url, alice) == 4
    assert erase_subjects(cache_url, alice) == 3  # her own three; the shared prompt is bob's too
    assert subjects_present(cache_url, alice) == 0
    layout, _ = postgres
    with closing(psycopg2.connect(cache_url.replace("+psycopg2", ""))) as con:
        con.autocommit = True
        cursor = con.cursor()
        cursor.execute("select count(*) from calls")
        assert cursor.fetchone() == (3,)
        cursor.execute("checkpoint")  # the table's pages, written to its file
        cursor.execute("select pg_relation_filepath('calls')")
        table_file = layout.postgres_data / cursor.fetchone()[0]
    on_disk = table_file.read_bytes()
    assert b"of alice" not in on_disk and b"of bob" in on_disk
    assert erase_subjects(cache_url, ["bob/9"]) == 1  # now the shared prompt is his alone
