"""The telemetry collector, an ASGI app: `POST /v1/telemetry` takes a batch of step records
(JSON or msgpack), keeps what each record's level allows, pseudonymizes and scrubs it, lands it
durably and only then answers 202; `POST /v1/forget` records a forget request; `GET /healthz`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bigaction_assets.privacy.forget import ForgetRegistry, record_request
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.telemetry.intake import Intake, land_records
from bigaction_assets.telemetry.landing import new_batch_id
from bigaction_assets.telemetry.validate import MAX_RECORDS, BatchError, check_batch, decode

MAX_BODY_BYTES = 8 * 1024 * 1024
MAX_FORGET_BYTES = 4 * 1024


@dataclass(frozen=True)
class CollectorSettings:
    """Where batches land and how they are checked.

    Attributes:
        landing: the landing root; batches go to `<landing>/telemetry/<day>/`.
        max_body_bytes: largest request body; a larger one is refused while it is read.
    """

    landing: Path
    pseudonyms: Pseudonymizer
    max_body_bytes: int = MAX_BODY_BYTES
    max_records: int = MAX_RECORDS


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BatchError(400, "Content-Length is not a number")
        if int(declared) > limit:
            raise BatchError(413, f"the body is {declared} bytes; at most {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BatchError(413, f"the body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class Collector:
    """The app's state: settings and the forget registry it consults on every batch."""

    def __init__(self, settings: CollectorSettings) -> None:
        self.settings = settings
        self.forgotten = ForgetRegistry(settings.landing)

    def land(self, body: bytes, content_type: str) -> tuple[str | None, Intake]:
        """Check, filter, scrub and land one batch; the batch id is None when nothing is kept."""
        records = check_batch(decode(body, content_type), self.settings.max_records)
        now = datetime.now(UTC)
        batch_id = new_batch_id(now)
        intake = land_records(
            self.settings.landing,
            records,
            self.settings.pseudonyms,
            batch_id,
            now.isoformat(),
            self.forgotten.current(),
        )
        return (batch_id if intake.lines else None), intake

    async def telemetry(self, request: Request) -> JSONResponse:
        try:
            body = await read_body(request, self.settings.max_body_bytes)
            content_type = request.headers.get("content-type", "")
            batch_id, intake = await run_in_threadpool(self.land, body, content_type)
        except BatchError as exc:
            return _error(exc.status, exc.message)
        return JSONResponse({"batch_id": batch_id, **intake.summary()}, status_code=202)

    async def forget(self, request: Request) -> JSONResponse:
        try:
            body = await read_body(request, MAX_FORGET_BYTES)
            value: Any = orjson.loads(body)
        except BatchError as exc:
            return _error(exc.status, exc.message)
        except orjson.JSONDecodeError:
            return _error(400, 'a forget request is JSON: {"user_id": "<your anonymous id>"}')
        user_id = value.get("user_id") if isinstance(value, dict) else None
        if not isinstance(user_id, str) or not 0 < len(user_id) <= 256:
            return _error(422, "`user_id` must be the anonymous id the library sends (1-256 chars)")
        pseudonym = self.settings.pseudonyms.user(user_id)
        new = await run_in_threadpool(record_request, self.settings.landing, pseudonym, "api")
        return JSONResponse({"status": "recorded" if new else "already recorded"}, status_code=202)

    async def health(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok", "dev_key": self.settings.pseudonyms.dev})


def create_app(settings: CollectorSettings) -> Starlette:
    collector = Collector(settings)
    return Starlette(
        routes=[
            Route("/v1/telemetry", collector.telemetry, methods=["POST"]),
            Route("/v1/forget", collector.forget, methods=["POST"]),
            Route("/healthz", collector.health, methods=["GET"]),
        ]
    )
