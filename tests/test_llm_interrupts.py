"""An interrupt raised inside an event-loop callback (where a signal handler can land) stops
the calls at once instead of being logged while they go on."""

from __future__ import annotations

import asyncio

import pytest

from bigaction_assets.llm.caller import run_jobs
from bigaction_assets.llm.interrupts import propagating_interrupts


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


def test_an_interrupt_in_a_callback_stops_the_jobs() -> None:
    started: list[int] = []

    async def main() -> None:
        jobs = jobs_that_interrupt_from_a_callback(started, at=5)
        await propagating_interrupts(run_jobs(jobs, concurrency=2))

    with pytest.raises(Interrupted):
        asyncio.run(main())
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
