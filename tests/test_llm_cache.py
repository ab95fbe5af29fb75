"""Calls through the durable cache: a rerun pays nothing twice, failures are stored as failures
and retried a bounded number of times, the budget stops new calls, concurrency is bounded, and
erasure removes a forgotten subject's calls."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from llm_server import Reply, ScriptedServer

from bigaction_assets.llm.budget import Budget, Price, PriceTable
from bigaction_assets.llm.cache import CallCache, CallKey, Spend, open_cache
from bigaction_assets.llm.caller import (
    CachedCaller,
    CallRequest,
    InvalidOutput,
    Outcome,
    accept_text,
    run_jobs,
)
from bigaction_assets.llm.client import ChatClient, ClientSettings, Completion
from bigaction_assets.llm.forget import erase_subjects, subjects_present


def requests(count: int, subject: str = "ep") -> list[CallRequest]:
    def ask(n: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"question {n} of {subject}"}]

    return [CallRequest(ask(n), (f"{subject}/{n}",)) for n in range(count)]


def run(
    base_url, cache_path, todo, validate=accept_text, concurrency=4, budget=None,
    prices=None, run_id="run-1", **settings,
):  # fmt: skip
    """Every request through one caller; outcomes in request order, and the caller."""

    async def no_wait(_seconds: float) -> None:
        return None

    client = ChatClient(
        ClientSettings(model="scripted", base_url=base_url, **settings), sleep=no_wait
    )
    with open_cache(cache_path) as cache:
        caller = CachedCaller(
            client, cache, prices or PriceTable(), budget or Budget(), run_id,
        )  # fmt: skip
        outcomes: list[Outcome | None] = [None] * len(todo)

        def job(index: int, request: CallRequest):
            async def _run() -> None:
                outcomes[index] = await caller.call(request, validate)

            return _run

        async def main() -> None:
            try:
                await run_jobs((job(i, r) for i, r in enumerate(todo)), concurrency)
            finally:
                await client.close()

        asyncio.run(main())
    return outcomes, caller


def test_a_rerun_makes_no_call_for_what_is_done(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer() as server:
        first, caller = run(server.base_url, cache, requests(12))
        assert len(server.requests) == 12 and caller.stats.completed == 12
        again, caller = run(server.base_url, cache, requests(12))
        assert len(server.requests) == 12  # nothing new was asked
    assert caller.stats.requests == 0 and caller.stats.cache_hits == 12
    assert [o.output for o in again] == [o.output for o in first]
    assert all(o.from_cache for o in again)


def test_concurrency_is_bounded_and_used(tmp_path):
    with ScriptedServer(latency=0.05) as server:
        run(server.base_url, tmp_path / "c.sqlite", requests(40), concurrency=6)
    assert server.max_in_flight == 6


def test_workers_start_one_turn_of_the_loop_apart():
    """Each worker takes its first job a turn of the event loop after the one before, so I/O
    that finished meanwhile is handled before every worker has started: the first calls leave
    as they are made, not all together after every worker's first prompt."""
    events: list[str] = []

    def job(n: int):
        async def _run() -> None:
            events.append(f"start {n}")
            done = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(done.set_result, None)  # I/O done at once
            await done
            events.append(f"resumed {n}")

        return _run

    asyncio.run(run_jobs((job(n) for n in range(3)), 3))
    assert events.index("resumed 0") < events.index("start 2")
    assert sorted(events) == sorted(f"{e} {n}" for e in ("start", "resumed") for n in range(3))


def test_a_job_that_fails_stops_the_other_workers():
    cancelled: list[int] = []

    def job(n: int):
        async def _run() -> None:
            if n == 0:
                raise RuntimeError("a bug in a job")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(n)
                raise

        return _run

    async def main() -> list[int]:
        with pytest.raises(RuntimeError, match="a bug"):
            await run_jobs((job(n) for n in range(3)), 3)
        await asyncio.sleep(0)  # one turn for the cancellations to land
        return sorted(cancelled)

    assert asyncio.run(main()) == [1, 2]  # stopped at once, not when the loop closes


def must_be_polite(completion: Completion) -> str:
    if "please" not in completion.text:
        raise InvalidOutput("impolite", f"no 'please' in {completion.text!r}")
    return completion.text


def test_invalid_output_is_retried_then_stored_as_a_failure_never_as_output(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer(lambda _r: Reply(content="no")) as server:
        [outcome], caller = run(server.base_url, cache, requests(1), validate=must_be_polite)
    assert outcome.status == "failed" and outcome.reason == "impolite"
    assert len(server.requests) == 3  # max_output_attempts
    assert caller.stats.invalid_outputs == {"impolite": 3}
    assert caller.stats.failures == {"impolite": 1}
    with sqlite3.connect(cache) as con:
        row = con.execute("select status, output, reason, failed_runs from calls").fetchone()
    assert row == ("failed", None, "impolite", 1)


def test_a_failure_is_retried_in_later_runs_up_to_the_bound_and_can_then_succeed(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer(lambda _r: Reply(status=400)) as server:
        for _ in range(3):
            [outcome], _ = run(server.base_url, cache, requests(1))
            assert outcome.status == "failed" and outcome.reason == "http_400"
        assert len(server.requests) == 3  # one request per run: a 400 is not retried in a run
        [outcome], caller = run(server.base_url, cache, requests(1))
        assert len(server.requests) == 3  # failed in 3 runs: given up
    assert outcome.from_cache and caller.stats.failed_before == {"http_400": 1}
    with ScriptedServer() as server:  # a failure below the bound is retried and replaced
        other = tmp_path / "other.sqlite"
        with ScriptedServer(lambda _r: Reply(status=400)) as failing:
            run(failing.base_url, other, requests(1))
        [outcome], _ = run(server.base_url, other, requests(1))
    assert outcome.status == "ok"
    with sqlite3.connect(other) as con:
        assert con.execute("select status, reason, failed_runs from calls").fetchone() == (
            "ok", None, 0,
        )  # fmt: skip


def test_a_cached_output_todays_rules_refuse_is_asked_again_and_replaced(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with ScriptedServer(lambda r: Reply(content="fine" if r.number == 1 else "fine, please")) as s:
        [first], _ = run(s.base_url, cache, requests(1))  # stored under lenient rules
        assert first.output == "fine"
        [again], caller = run(s.base_url, cache, requests(1), validate=must_be_polite)
        [third], later = run(s.base_url, cache, requests(1), validate=must_be_polite)
    assert again.output == "fine, please" and not again.from_cache
    assert caller.stats.stale_outputs == {"impolite": 1} and caller.stats.requests == 1
    assert third.from_cache and later.stats.requests == 0  # the replacement is kept


def test_a_later_failure_or_answer_never_replaces_a_finished_call(tmp_path):
    """Two runs answering the same call at once: the first output stays, so every row built
    from the call reads one answer (the same statements as the shared PostgreSQL cache)."""
    key, spend = CallKey("m", "prompt", "p"), Spend(1, 1, 0.0)
    with CallCache(tmp_path / "cache.sqlite") as cache:
        cache.record_ok(key, "first", ["ep"], 1, spend, "r", spend)
        cache.record_failure(key, "timeout", "", ["ep"], 1, spend, "r", spend)
        cache.record_ok(key, "second", ["ep"], 1, spend, "r", spend)
        call = cache.get(key)
        cache.record_ok(key, "third", ["ep"], 1, spend, "r", spend, stale="first")
        replaced = cache.get(key)
    assert call is not None and (call.status, call.output) == ("ok", "first")
    assert replaced is not None and replaced.output == "third"


def test_malformed_responses_are_retried_a_bounded_number_of_times(tmp_path):
    with ScriptedServer(lambda _r: Reply(raw_body=b"{oops")) as server:
        [outcome], caller = run(server.base_url, tmp_path / "c.sqlite", requests(1))
    assert outcome.status == "failed" and outcome.reason == "malformed_response"
    assert len(server.requests) == 3 and caller.stats.invalid_outputs == {"malformed_response": 3}


def test_budget_stops_new_calls_and_the_next_run_does_the_rest(tmp_path):
    cache = tmp_path / "cache.sqlite"
    prices = PriceTable({"scripted": Price(1_000_000.0, 1_000_000.0)})  # $1 a token
    todo = requests(10)
    with ScriptedServer() as server:
        # each call reserves its prompt (~14 tokens) and max_tokens=20 before it starts
        outcomes, caller = run(
            server.base_url, cache, todo, concurrency=1, max_tokens=20,
            budget=Budget(max_cost_usd=100.0), prices=prices,
        )  # fmt: skip
        done = [o for o in outcomes if o.status == "ok"]
        deferred = [o for o in outcomes if o.status == "deferred"]
        assert 1 <= len(done) == len(server.requests) < 10
        assert len(deferred) == caller.stats.deferred == 10 - len(done)
        assert caller.stats.spend.cost_usd <= 100.0 and caller.budget.exhausted
        # stopped because the next call's worst case no longer fitted, not earlier
        assert caller.stats.spend.cost_usd + 14 + 20 > 100.0
        with sqlite3.connect(cache) as con:  # deferred calls leave no row behind
            assert con.execute("select count(*) from calls").fetchone() == (len(done),)
            spent = con.execute("select cost_usd from run_spend where run_id = 'run-1'")
            assert spent.fetchone()[0] == caller.stats.spend.cost_usd
        outcomes, caller = run(
            server.base_url, cache, todo, max_tokens=20, run_id="run-2", prices=prices,
            budget=Budget(max_tokens=10_000),
        )  # fmt: skip
    assert all(o.status == "ok" for o in outcomes)
    assert caller.stats.cache_hits == len(done) and caller.stats.completed == 10 - len(done)
    assert len(server.requests) == 10


def test_a_token_budget_counts_concurrent_calls_together(tmp_path):
    with ScriptedServer(latency=0.05) as server:
        outcomes, caller = run(
            server.base_url, tmp_path / "c.sqlite", requests(20), concurrency=8,
            max_tokens=50, budget=Budget(max_tokens=300),
        )  # fmt: skip
    assert caller.stats.spend.tokens <= 300
    assert sum(o.status == "ok" for o in outcomes) == len(server.requests) < 20


def test_erasure_removes_a_subjects_calls_but_keeps_shared_ones(tmp_path):
    cache = tmp_path / "cache.sqlite"
    shared = CallRequest([{"role": "user", "content": "same prompt"}], ("alice/1",))
    echo = lambda request: Reply(content=f"I read: {request.last_user_text}")  # noqa: E731
    with ScriptedServer(echo) as server:
        run(server.base_url, cache, [*requests(3, "alice"), *requests(2, "bob"), shared])
        run(server.base_url, cache, [CallRequest(shared.messages, ("bob/9",))])
    alice = ["alice/0", "alice/1", "alice/2"]
    assert subjects_present(cache, alice) == 4
    assert erase_subjects(cache, alice) == 3  # her own three; the shared prompt is bob's too
    assert subjects_present(cache, alice) == 0
    with sqlite3.connect(cache) as con:
        assert con.execute("select count(*) from calls").fetchone() == (3,)
    on_disk = b"".join(p.read_bytes() for p in tmp_path.glob("cache.sqlite*"))
    assert b"of alice" not in on_disk and b"of bob" in on_disk  # overwritten, not just unlinked
    assert erase_subjects(cache, ["bob/9"]) == 1  # now the shared prompt is his alone
    assert erase_subjects(cache, ["bob/0", "nobody"]) == 1
