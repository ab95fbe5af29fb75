"""An interrupt that lands in an event-loop callback stops the calls instead of being logged.

Dagster stops a terminated run by raising its interrupt (a `BaseException`) from the SIGTERM
handler, in whatever code the main thread is running at that moment. In a task's step asyncio
passes it on to whoever awaits the task; in a plain callback (a transport handing over reply
bytes, a timer) asyncio only logs it and carries on, and the run would go on calling the model
until every call was done. `propagating_interrupts` catches such an exception in the loop's
exception handler, cancels the task that runs the calls, and raises the interrupt from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


def _is_interrupt(error: object) -> bool:
    return isinstance(error, BaseException) and not isinstance(
        error, Exception | asyncio.CancelledError
    )


async def propagating_interrupts(work: Awaitable[T]) -> T:
    """`await work`, raising an interrupt that a loop callback raised, as soon as it is raised."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None, "propagating_interrupts runs inside a task"
    caught: list[BaseException] = []
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if _is_interrupt(error):
            if not caught:
                caught.append(error)
                task.cancel()
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    try:
        return await work
    except asyncio.CancelledError:
        if caught:
            raise caught[0] from None
        raise
    finally:
        loop.set_exception_handler(previous)
