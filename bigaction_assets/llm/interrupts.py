"""A terminated run stops its calls at once, wherever the signal lands.

Dagster stops a terminated run by raising its interrupt (a `BaseException`) from its SIGTERM
and SIGINT handler. Python runs a signal handler between any two bytecodes of the main thread,
so the interrupt is raised in whatever code runs at that moment, and some code drops it:

- a finalizer (`__del__`, a weakref callback, the garbage collector): Python prints
  "Exception ignored in ..." and carries on;
- an event-loop callback (a transport handing over reply bytes, a timer): asyncio logs it and
  carries on.

Either way the run went on calling the model until every call was done, and paid for them.
`propagating_interrupts` closes both holes while the calls run:

- `DeferredSignals` swaps the handler for one that only queues the signal and wakes the loop;
  the previous handler then runs from a loop callback of ours, and the interrupt it raises
  cancels the calls and is raised from `propagating_interrupts`. A handler that raises nothing
  (Dagster's while it holds interrupts back) runs all the same.
- An interrupt raised in a loop callback all the same (a handler of another signal) is caught
  in the loop's exception handler, with the same effect.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any, TypeVar

T = TypeVar("T")

INTERRUPT_SIGNALS = (signal.SIGINT, signal.SIGTERM)
Handler = Callable[[int, FrameType | None], Any]


def _is_interrupt(error: object) -> bool:
    return isinstance(error, BaseException) and not isinstance(
        error, Exception | asyncio.CancelledError
    )


class DeferredSignals:
    """While installed, SIGINT and SIGTERM run their handlers as callbacks of `loop`.

    Only handlers that are Python functions are deferred (Dagster's, Python's own SIGINT
    handler); an ignored signal or one left to the operating system is left alone. Signal
    handlers can only be set from the main thread: in another thread it does nothing.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, stop: Callable[[BaseException], None]):
        self._loop = loop
        self._stop = stop
        self._previous: dict[int, Handler] = {}
        self._arrived: list[tuple[int, FrameType | None]] = []

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signo in INTERRUPT_SIGNALS:
            handler = signal.getsignal(signo)
            if callable(handler):
                self._previous[signo] = handler
                signal.signal(signo, self._queue)

    def _queue(self, signo: int, frame: FrameType | None) -> None:
        # Runs between two bytecodes of whatever code: it must not raise, only queue and wake.
        self._arrived.append((signo, frame))
        self._loop.call_soon_threadsafe(self._deliver)

    def _deliver(self) -> None:
        while self._arrived:
            signo, frame = self._arrived.pop(0)
            try:
                self._previous[signo](signo, frame)
            except BaseException as error:  # the interrupt: it ends the calls, not this callback
                self._stop(error)

    def restore(self) -> None:
        """Put the previous handlers back, then run those of signals the loop did not reach."""
        for signo, handler in self._previous.items():
            if signal.getsignal(signo) == self._queue:  # unless someone replaced ours since
                signal.signal(signo, handler)
        while self._arrived:
            signo, frame = self._arrived.pop(0)
            self._previous[signo](signo, frame)


async def propagating_interrupts(work: Awaitable[T]) -> T:
    """`await work`; an interrupt, whether signalled or raised in a callback, ends it at once."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None, "propagating_interrupts runs inside a task"
    caught: list[BaseException] = []

    def stop(error: BaseException) -> None:
        if not caught:
            caught.append(error)
            task.cancel()

    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if _is_interrupt(error):
            stop(error)
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    signals = DeferredSignals(loop, stop)
    loop.set_exception_handler(handler)
    signals.install()
    try:
        return await work
    except asyncio.CancelledError:
        if caught:
            raise caught[0] from None
        raise
    finally:
        loop.set_exception_handler(previous)
        signals.restore()
