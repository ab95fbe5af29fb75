"""uvicorn's h11 protocol with a deadline on request headers, against slow-header clients.

uvicorn drops a kept-alive connection that stays silent, but a client that opens a connection
and sends nothing, or sends its headers a byte at a time, holds a connection slot for as long
as it likes: enough of them and every slot is taken (slowloris). Here each request's line and
headers must arrive whole within `header_seconds` of the connection opening, or of the first
byte of the next request on a kept-alive connection; otherwise the client gets a 408 and the
connection is closed. The body has its own deadline in the app.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 32\r\nconnection: close\r\n\r\nrequest headers sent too slowly\n"
)


class HeaderDeadlineH11Protocol(H11Protocol):
    """`H11Protocol` that closes a connection whose request headers are not in on time."""

    header_seconds: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            self._arm_header_deadline()  # the first bytes of the next request on this connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm_header_deadline()  # the request line and headers are in

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_seconds, self._headers_late)

    def _disarm_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.write(TIMEOUT_RESPONSE)
            self.transport.close()


def header_deadline_protocol(seconds: float) -> type[HeaderDeadlineH11Protocol]:
    """The protocol class to give uvicorn as `http=`, with a deadline of `seconds`."""
    if seconds <= 0:
        raise ValueError(f"the header deadline must be positive, not {seconds}")
    return type(
        "HeaderDeadlineH11Protocol", (HeaderDeadlineH11Protocol,), {"header_seconds": seconds}
    )


MAX_HEADER_BYTES = 16 * 1024  # the request line and headers; ours need a few hundred bytes


def add_header_arguments(parser: argparse.ArgumentParser) -> None:
    """`--header-seconds` for a served app's command line."""
    parser.add_argument(
        "--header-seconds",
        type=float,
        default=10.0,
        help="a request's line and headers must arrive within this, else 408 and close",
    )


def header_limits(header_seconds: float) -> dict[str, Any]:
    """`uvicorn.run` options bounding request headers: h11 bounds their size (uvicorn's
    httptools parser has no limit), the protocol their time."""
    return {
        "http": header_deadline_protocol(header_seconds),
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
    }
