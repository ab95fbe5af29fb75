"""The HTTP client under `openai.AsyncOpenAI`: aiohttp, with each request sent when it is made.

The `openai` package ships an aiohttp transport (the `aiohttp` extra, `DefaultAioHttpClient`);
a call costs ~30% less CPU over it than over the default httpx one (benchmarks/README.md).
Three things are ours:

- A pool of as many connections as calls in flight, kept alive between calls.
- `EagerBodyRequest`. On Python 3.11 aiohttp writes a request's body (and with it the
  buffered headers) from a task of its own, which runs only after every task that is already
  waiting to run (3.12 starts such a task eagerly). Replies that arrive together are then all
  handled before the first of their next requests leaves, so those requests arrive together
  again: against a server with a steady latency a burst stays a burst for the whole run, and
  each call waits for the others' handling. Writing a body that is already in memory inside
  `send` lets each request leave as soon as its call makes it.
- `ConnectionErrorsTransport`: a refused or dropped connection is a connection error, not a
  timeout.
"""

from __future__ import annotations

import ssl
from typing import Any

import aiohttp
import httpx2
import openai
from aiohttp.payload import BytesPayload
from openai._vendor.httpx_aiohttp import AiohttpTransport

# Built once per process, as the default client would for each: loading the CA certificates
# takes ~20 ms. Plain http (a local server) never uses it.
TLS_CONTEXT: ssl.SSLContext = httpx2.create_ssl_context()
# A body up to this size is written at once, without waiting for the socket to drain (a prompt
# within its token budgets is ~20 KB); a larger one goes the usual way.
EAGER_BODY_BYTES = 1 << 20


class EagerBodyRequest(aiohttp.ClientRequest):
    """An aiohttp request whose in-memory body is on the wire when `send` returns.

    It reads aiohttp's request internals (`_body`, `_continue`), hence the exact pin of aiohttp
    in pyproject.toml; `tests/test_llm_transport.py` fails if the order of sending changes.
    """

    async def send(self, conn: Any) -> aiohttp.ClientResponse:
        body = self._body
        small = isinstance(body, BytesPayload) and (body.size or 0) <= EAGER_BODY_BYTES
        waits = self.chunked or self._continue is not None  # 100-continue: body after a reply
        if not small or waits or conn.protocol is None or conn.protocol.writing_paused:
            return await super().send(conn)
        # Without a body aiohttp writes the headers at once and starts no writer task; the
        # Content-Length header was set from the body when the request was made.
        self._body = None
        try:
            response = await super().send(conn)
        finally:
            self._body = body
        transport = conn.transport
        if transport is None or transport.is_closing():
            raise aiohttp.ClientConnectionResetError("the connection closed before the body")
        transport.write(body._value)
        return response


class ConnectionErrorsTransport(AiohttpTransport):
    """The shipped transport, with connection failures that are not timeouts told apart.

    It maps every aiohttp connection error (a refused connection, a server that hung up) to
    `httpx2.ConnectTimeout`, which the client reports as a timeout; they become
    `httpx2.ConnectError` here, which it reports as a connection error.
    """

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await super().handle_async_request(request)
        except httpx2.ConnectTimeout as error:
            if isinstance(error.__cause__, TimeoutError):
                raise
            raise httpx2.ConnectError(str(error), request=request) from error.__cause__


def http_client(connections: int) -> httpx2.AsyncClient:
    """The `http_client` of an `AsyncOpenAI` that keeps `connections` calls in flight."""

    def session() -> aiohttp.ClientSession:  # made on first use, inside the running loop
        connector = aiohttp.TCPConnector(limit=connections, ssl=TLS_CONTEXT)
        return aiohttp.ClientSession(connector=connector, request_class=EagerBodyRequest)

    transport = ConnectionErrorsTransport(verify=TLS_CONTEXT, client=session)
    return openai.DefaultAioHttpClient(transport=transport)
