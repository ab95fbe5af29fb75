"""An interrupt stops the calls at once instead of being dropped while they go on: raised
inside an event-loop callback, or signalled while a finalizer runs (where Python drops it)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterator

import pytest

from bigaction_assets.llm.caller import run_jobs
from bigaction_assets.llm.interrupts import DeferredSignals, propagating_interrupts


class Interrupted(BaseException):
    """Stands for Dagster's interrupt, which is a BaseException raised by a signal handler."""


def jobs_that_interrupt_from_a_callback(started: list[int], at: int):
    def job(number: int):
        async def call() -> None:
            started.append(number)
            if number == at:  # as if SIGTERM arrived while the loop ran a transport callback
                asyncio.get_running_loop().call_soon(raise_interrupt)
            await asyncio.sleep(0.01)

        return call

    return [job(number) for number in range(100)]


def raise_interrupt() -> None:
    raise Interrupted("terminated")


def run_guarded(jobs) -> None:
    """The jobs two at a time under `propagating_interrupts`, as `llm.session.run_calls` runs
    its calls."""

    async def main() -> None:
        await propagating_interrupts(run_jobs(jobs, concurrency=2))

    asyncio.run(main())


def test_an_interrupt_in_a_callback_stops_the_jobs() -> None:
    started: list[int] = []
    with pytest.raises(Interrupted):
        run_guarded(jobs_that_interrupt_from_a_callback(started, at=5))
    assert max(started) <= 7, started  # the jobs in flight when it came, and nothing after


def test_without_it_asyncio_logs_the_interrupt_and_runs_every_job() -> None:
    """Why it exists: the same run without it ends normally, all 100 jobs done."""
    started: list[int] = []
    logged: list[BaseException] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: logged.append(context["exception"]))
        await run_jobs(jobs_that_interrupt_from_a_callback(started, at=5), concurrency=2)

    asyncio.run(main())
    assert len(started) == 100 and isinstance(logged[0], Interrupted)


def test_other_errors_in_callbacks_reach_the_previous_handler_and_the_jobs_go_on() -> None:
    seen: list[BaseException] = []

    async def main() -> str:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _loop, context: seen.append(context["exception"]))

        async def work() -> str:
            loop.call_soon(lambda: 1 / 0)
            await asyncio.sleep(0.01)
            return "done"

        result = await propagating_interrupts(work())
        assert loop.get_exception_handler() is not None  # the previous one, put back
        return result

    assert asyncio.run(main()) == "done"
    assert len(seen) == 1 and isinstance(seen[0], ZeroDivisionError)


@pytest.fixture
def interrupting_sigterm() -> Iterator[list[int]]:
    """SIGTERM handled as Dagster handles it in a step: its handler raises the interrupt."""
    calls: list[int] = []

    def handler(signo: int, _frame: object) -> None:
        calls.append(signo)
        raise Interrupted("terminated")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield calls
    finally:
        signal.signal(signal.SIGTERM, previous)


class SignalsWhenCollected:
    """Sends SIGTERM to this process from its finalizer, so the handler runs inside `__del__`."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGTERM)


def jobs_that_signal_from_a_finalizer(started: list[int], at: int):
    def job(number: int):
        async def call() -> None:
            started.append(number)
            if number == at:
                SignalsWhenCollected()  # collected at once: the signal lands in its finalizer
            await asyncio.sleep(0.01)

        return call

    return [job(number) for number in range(100)]


def test_a_signal_that_lands_in_a_finalizer_stops_the_jobs(interrupting_sigterm) -> None:
    started: list[int] = []
    with pytest.raises(Interrupted):
        run_guarded(jobs_that_signal_from_a_finalizer(started, at=5))
    assert interrupting_sigterm == [signal.SIGTERM]
    assert max(started) <= 7, started
    assert signal.getsignal(signal.SIGTERM) is not None
    with pytest.raises(Interrupted):  # the handler is back in place once the calls ended
        signal.raise_signal(signal.SIGTERM)


def test_without_deferring_python_drops_the_interrupt_of_a_finalizer(
    interrupting_sigterm, monkeypatch
) -> None:
    """Why signals are deferred: raised inside `__del__`, the interrupt is printed and dropped."""
    started: list[int] = []
    dropped: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda hook: dropped.append(hook.exc_value))

    asyncio.run(run_jobs(jobs_that_signal_from_a_finalizer(started, at=5), concurrency=2))
    assert len(started) == 100 and interrupting_sigterm == [signal.SIGTERM]
    assert len(dropped) == 1 and isinstance(dropped[0], Interrupted)


def test_a_signal_the_loop_did_not_reach_is_handled_when_the_handlers_are_put_back(
    interrupting_sigterm,
) -> None:
    stopped: list[BaseException] = []

    async def main() -> None:
        signals = DeferredSignals(asyncio.get_running_loop(), stopped.append)
        signals.install()
        os.kill(os.getpid(), signal.SIGTERM)  # queued: the loop gets no turn before restore
        assert interrupting_sigterm == []
        with pytest.raises(Interrupted):
            signals.restore()

    asyncio.run(main())
    assert interrupting_sigterm == [signal.SIGTERM] and stopped == []


def test_a_handler_that_holds_the_interrupt_back_runs_and_the_jobs_go_on() -> None:
    """Dagster's handler outside a step only notes the signal; deferred, it still does."""
    noted: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signo, _frame: noted.append(signo))
    started: list[int] = []
    try:
        run_guarded(jobs_that_signal_from_a_finalizer(started, at=5))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(started) == 100 and noted == [signal.SIGTERM]
