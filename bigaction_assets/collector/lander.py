"""Landing one batch in one process: decode and check it, keep what each level allows,
pseudonymize and scrub it, make sure ingestion can store every line, then write it durably; a
batch sent again under the same idempotency key is answered as the first time, never landed
twice."""

from __future__ import annotations

import logging
import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.collector.batch_keys import BatchKeys, body_digest
from bigaction_assets.durable import write_durably
from bigaction_assets.privacy.forget import ForgetRegistry
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.telemetry.intake import Intake, take_batch
from bigaction_assets.telemetry.storable import batch_failure
from bigaction_assets.telemetry.validate import MAX_RECORDS, BatchError, check_batch, decode
from bigaction_assets.telemetry_batches import batch_path, new_batch_id

MAX_BODY_BYTES = 8 * 1024 * 1024
log = logging.getLogger("bigaction.collector")


@dataclass(frozen=True)
class CollectorSettings:
    """Where batches land and how they are checked.

    Attributes:
        landing: the landing root; batches go to `<landing>/telemetry/<day>/`.
        max_body_bytes: largest request body; a larger one is refused while it is read.
        workers: processes that scrub and land batches; 0 runs them in the server's process.
        body_seconds: longest a client may take to send a body (a slow sender holds a
            connection and a worker's input open).
        scrub_seconds: most CPU seconds a worker process spends on one batch (crafted text
            can make the search slow); past it the batch is refused. Not enforced in the
            server's own process (`workers=0`), where no per-batch CPU timer exists.
        key_days: how long an idempotency key is remembered (a retry after that lands anew).
        lander: the class that lands batches in each worker (tests put a faulty one here).
    """

    landing: Path
    pseudonyms: Pseudonymizer
    max_body_bytes: int = MAX_BODY_BYTES
    max_records: int = MAX_RECORDS
    workers: int = 0
    body_seconds: float = 30.0
    scrub_seconds: float = 20.0
    key_days: float = 7.0
    lander: type[Lander] | None = None


@dataclass(frozen=True)
class Answer:
    """The HTTP status and JSON body a batch earns."""

    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Ticket:
    """What the server fixes about a request before a worker sees it, so that a worker that
    dies and a retry of its batch elsewhere land the very same file: the batch's id and
    arrival time, and the client's idempotency key."""

    batch_id: str
    received_at: str
    key: str | None = None


class Lander:
    """Lands batches for one process: the settings, the forget registry it consults and the
    idempotency keys it remembers."""

    def __init__(self, settings: CollectorSettings) -> None:
        self.settings = settings
        self.forgotten = ForgetRegistry(settings.landing)
        self.keys = BatchKeys(settings.landing)

    def land(self, body: bytes, content_type: str, ticket: Ticket | None = None) -> Answer:
        """Check, filter, scrub and land one batch (under a new id, unless the server gave it
        one); never raises."""
        if ticket is None:
            now = datetime.now(UTC)
            ticket = Ticket(new_batch_id(now), now.isoformat())
        try:
            return self._land(body, content_type, ticket)
        except BatchError as exc:
            return Answer(exc.status, {"error": exc.message})
        except ScrubTimeout:
            seconds = self.settings.scrub_seconds
            message = f"the batch took over {seconds:g} CPU seconds to scrub; nothing was kept"
            return Answer(413, {"error": message + "; send fewer or smaller records"})
        except OSError as exc:  # the disk refused: nothing was acknowledged, so nothing is lost
            log.error("could not land a batch: %s (errno %s)", type(exc).__name__, exc.errno)
            return Answer(503, {"error": "the batch could not be stored; nothing was kept, retry"})
        except Exception as exc:  # a bug: say so without echoing the sender's data anywhere
            frames = "".join(traceback.format_tb(exc.__traceback__))
            log.error("failed to land a batch: %s\n%s", type(exc).__name__, frames)
            return Answer(500, {"error": "internal error; the batch was not stored"})

    def _land(self, body: bytes, content_type: str, ticket: Ticket) -> Answer:
        digest = body_digest(body, content_type)
        known = self.keys.get(ticket.key) if ticket.key else None
        if known is not None:
            if known.digest != digest:
                raise BatchError(422, "this Idempotency-Key was sent before with another batch; "
                                 "use a new key for each batch")  # fmt: skip
            landed = batch_path(self.settings.landing, known.batch_id).exists()
            if landed or not known.answer.get("stored"):
                return Answer(202, known.answer)  # the first answer: nothing lands twice
            # remembered, then cut short before its file was written, so never answered 202:
            # it lands now, as any new batch
        records = check_batch(decode(body, content_type), self.settings.max_records)
        forgotten = self.forgotten.current()
        with cpu_deadline(self.settings.scrub_seconds):
            intake = take_batch(
                records, self.settings.pseudonyms, ticket.batch_id, ticket.received_at, forgotten
            )
            failure = batch_failure(ticket.batch_id, map(orjson.loads, intake.lines))
        if failure is not None:
            index, why = failure
            raise BatchError(422, f"records[{index}] cannot be stored: {why}; nothing was kept")
        # a request that came while the batch was scrubbed: their lines go before any write
        intake.drop(self.forgotten.current() - forgotten)
        answer = self._accepted(intake, ticket, digest)  # remembered before the batch lands,
        path = batch_path(self.settings.landing, ticket.batch_id)  # so no crash can double it
        if intake.lines:
            write_durably(path, b"".join(intake.lines))
        if self._forget_late(intake, forgotten, path):
            answer = self._accepted(intake, ticket, digest)
        return answer

    def _accepted(self, intake: Intake, ticket: Ticket, digest: str) -> Answer:
        """The 202 a batch earns, remembered under its idempotency key if it has one."""
        body = {"batch_id": ticket.batch_id if intake.lines else None, **intake.summary()}
        if ticket.key:
            self.keys.remember(ticket.key, digest, ticket.batch_id, ticket.received_at, body)
        return Answer(202, body)

    def _forget_late(self, intake: Intake, before: frozenset[str], path: Path) -> bool:
        """A sender who asked to be forgotten while the batch was scrubbed and written: the
        erasure may already have read the landing area, so their lines go now. Whether any
        went."""
        later = self.forgotten.current()
        if later == before or not intake.drop(later - before):
            return False
        if intake.lines:
            write_durably(path, b"".join(intake.lines))
        else:
            path.unlink(missing_ok=True)
        return True


class ScrubTimeout(Exception):
    """A batch spent its CPU time budget before it was scrubbed."""


@contextmanager
def cpu_deadline(seconds: float) -> Iterator[None]:
    """Raise ScrubTimeout once this process has spent `seconds` more of CPU time; only in a
    process's main thread (a worker's), where signals arrive."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise ScrubTimeout

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
