"""Where batches are landed: in worker processes, one per core, so the event loop only moves
bytes and scrubbing uses every core; or in a thread of the server's own process (`workers=0`,
for tests and small deployments). Either way the answer comes only after the batch file is on
disk (fsync, rename, fsync of its folder).

A worker that dies (a crash in native code, the kernel's out-of-memory killer) takes down the
batches it shared a pool with; each of them is landed again alone in a process of its own, so
only the batch that kills that one too is refused, and since the server fixed each batch's id
before it was sent to a worker, one that had landed before the crash is written to the same
file, not twice."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool

from bigaction_assets.clean_spawn import clean_spawn_context
from bigaction_assets.collector.batch_keys import BatchKeys
from bigaction_assets.collector.lander import (
    MAX_BODY_BYTES,
    Answer,
    CollectorSettings,
    Lander,
    Ticket,
)
from bigaction_assets.durable import remove_orphaned_temps
from bigaction_assets.privacy.forget import forget_dir
from bigaction_assets.telemetry_batches import batch_path, new_batch_id, telemetry_dir

__all__ = ["MAX_BODY_BYTES", "Answer", "CollectorSettings", "Lander", "LandingPool", "Ticket"]
log = logging.getLogger("bigaction.collector")
DAY_SECONDS = 86400
CULPRIT = (
    "this batch crashed the process that checks and scrubs it, and did again when landed on "
    "its own; nothing of it was kept, and it will fail the same way if sent again unchanged"
)

_WORKER: Lander | None = None


def _start_worker(settings: CollectorSettings) -> None:
    global _WORKER
    _WORKER = (settings.lander or Lander)(settings)


def _land_in_worker(body: bytes, content_type: str, ticket: Ticket) -> Answer:
    assert _WORKER is not None, "the pool's initializer sets the worker up"
    return _WORKER.land(body, content_type, ticket)


def _ready() -> bool:
    return _WORKER is not None


def clean_landing(settings: CollectorSettings) -> None:
    """At start-up: temp files a killed writer left in the folders the collector writes, and
    idempotency keys past their time, each logged."""
    for folder in (telemetry_dir(settings.landing), forget_dir(settings.landing)):
        for path in remove_orphaned_temps(folder):
            log.warning("removed a temp file a stopped writer left: %s", path)
    gone = BatchKeys(settings.landing).forget_older_than(settings.key_days)
    if gone:
        log.info("forgot %d idempotency keys older than %g days", gone, settings.key_days)


class LandingPool:
    """Runs `Lander.land` off the event loop: in worker processes, or in a thread."""

    def __init__(self, settings: CollectorSettings) -> None:
        self.settings = settings
        self.inline = (settings.lander or Lander)(settings)
        self._pool: ProcessPoolExecutor | None = None
        self._alone: asyncio.Lock | None = None  # one batch at a time in the solo process
        self._solo: ProcessPoolExecutor | None = None
        self._in_flight: set[str] = set()
        self._cleaned_at = time.monotonic()

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            workers,
            # spawned (no forked server threads), without the server's main module
            mp_context=clean_spawn_context(),
            initializer=_start_worker,
            initargs=(self.settings,),
        )

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = self._new_pool(self.settings.workers)
        return self._pool

    async def start(self) -> None:
        """Clean the landing folder, then start the workers now rather than on the first batch."""
        await run_in_threadpool(clean_landing, self.settings)
        self._cleaned_at = time.monotonic()
        self._alone = asyncio.Lock()
        if self.settings.workers:
            pool = self._executor()
            ready = [pool.submit(_ready) for _ in range(self.settings.workers)]
            await asyncio.gather(*(asyncio.wrap_future(f) for f in ready))

    async def land(self, body: bytes, content_type: str, key: str | None = None) -> Answer:
        if key is not None and key in self._in_flight:
            return Answer(409, {"error": "a batch with this Idempotency-Key is being landed; "
                                "retry once it is answered"})  # fmt: skip
        if time.monotonic() - self._cleaned_at > DAY_SECONDS:  # keys expire on a running server
            self._cleaned_at = time.monotonic()
            await run_in_threadpool(self.inline.keys.forget_older_than, self.settings.key_days)
        now = datetime.now(UTC)
        ticket = Ticket(new_batch_id(now), now.isoformat(), key)
        if key is not None:
            self._in_flight.add(key)
        try:
            return await self._land(body, content_type, ticket)
        finally:
            self._in_flight.discard(key or "")

    async def _land(self, body: bytes, content_type: str, ticket: Ticket) -> Answer:
        if not self.settings.workers:
            return await run_in_threadpool(self.inline.land, body, content_type, ticket)
        pool = self._executor()
        try:
            return await asyncio.wrap_future(
                pool.submit(_land_in_worker, body, content_type, ticket)
            )
        except BrokenProcessPool:  # a worker died: maybe this batch's doing, maybe another's
            if self._pool is pool:
                log.error("a landing worker died; starting new workers, retrying its batches")
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            return await self._land_alone(body, content_type, ticket)

    async def _land_alone(self, body: bytes, content_type: str, ticket: Ticket) -> Answer:
        """Land a batch whose worker died, alone in a process of its own: if that dies too,
        this batch is the culprit, and only its sender hears so."""
        assert self._alone is not None, "start() runs before any batch"
        async with self._alone:
            if self._solo is None:
                self._solo = self._new_pool(1)
            solo = self._solo
            try:
                job = solo.submit(_land_in_worker, body, content_type, ticket)
                return await asyncio.wrap_future(job)
            except BrokenProcessPool:
                self._solo = None
                solo.shutdown(wait=False, cancel_futures=True)
        log.error("a batch crashed its landing worker twice, the second time alone; refused")
        # it may have died after its file was written: the answer says nothing was kept
        await run_in_threadpool(self._discard, ticket)
        return Answer(422, {"error": CULPRIT})

    def _discard(self, ticket: Ticket) -> None:
        batch_path(self.settings.landing, ticket.batch_id).unlink(missing_ok=True)

    def close(self) -> None:
        """Stop the workers once the batches they hold are landed."""
        for pool in (self._pool, self._solo):
            if pool is not None:
                pool.shutdown(wait=True)
        self._pool = self._solo = None
