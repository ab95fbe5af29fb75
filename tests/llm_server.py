"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests and the thoughts benchmark.

Real HTTP/1.1 with keep-alive on asyncio streams, so the real `openai` client talks to it as to
any server. A script decides each reply: latency, a status with headers (429 + Retry-After, 500),
a hang past the client's timeout, a dropped connection, a malformed body, or a normal completion.
Run it in a thread (`ScriptedServer(...).start()`) or as a process (`python tests/llm_server.py
--latency 0.2`, which prints its base URL on the first line).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

COMPLETIONS_PATH = "/v1/chat/completions"
STATS_PATH = "/stats"  # GET: requests received and answered, for a server in another process


@dataclass(frozen=True)
class Received:
    """One request as the server read it (`number` counts from 1)."""

    number: int
    path: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str:
        return str(self.body.get("model"))

    @property
    def prompt_key(self) -> str:
        """A hash of the messages: equal for the same prompt, whatever the client's JSON."""
        text = json.dumps(self.messages, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (its text parts joined, when it has parts)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return _text(users[-1].get("content")) if users else ""

    @property
    def image_urls(self) -> list[str]:
        """The URL of every `image_url` part of every message, in order (data URLs inline)."""
        return [
            str(part["image_url"]["url"])
            for message in self.messages
            if isinstance(message.get("content"), list)
            for part in message["content"]
            if isinstance(part, dict) and part.get("type") == "image_url"
        ]


def _text(content: Any) -> str:
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(str(text or "") for text in parts)
    return str(content or "")


@dataclass(frozen=True)
class Reply:
    """What the server sends back for one request."""

    content: str | None = None
    """The assistant's text; None means `default_content` of the server."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (added to the server's fixed latency)."""
    hang: bool = False
    """Never answer: hold the request until the client gives up (a timeout)."""
    drop: bool = False
    """Close the connection without answering (a server that hangs up)."""
    raw_body: bytes | None = None
    """Send these bytes as the body instead of a completion (malformed output)."""
    finish_reason: str = "stop"


Script = Callable[[Received], Reply]


def default_content(request: Received) -> str:
    """A plausible first-person thought, different per prompt."""
    return f"I take this step because the task asks for it (prompt {request.prompt_key[:8]})."


def _completion(request: Received, reply: Reply) -> bytes:
    content = reply.content if reply.content is not None else default_content(request)
    prompt_words = sum(len(_text(m.get("content")).split()) for m in request.messages)
    completion_words = len(content.split())
    payload = {
        "id": f"chatcmpl-{request.number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": request.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_words,
            "completion_tokens": completion_words,
            "total_tokens": prompt_words + completion_words,
        },
    }
    return json.dumps(payload).encode()


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests"}


class ScriptedServer:
    """Serves until `stop()`. `requests` lists what arrived, `answered` counts full replies."""

    def __init__(
        self,
        script: Script | None = None,
        latency: float = 0.0,
        hang_seconds: float = 30.0,
        fast: bool = False,
    ) -> None:
        self.script: Script = script or (lambda _request: Reply())
        self.latency = latency
        self.hang_seconds = hang_seconds
        self.fast = fast  # uvloop: for the benchmark, where the server must not be the limit
        self.requests: list[Received] = []
        self.answered = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def prompts_requested(self) -> list[str]:
        with self._lock:
            return [r.prompt_key for r in self.requests]

    # --- serving -------------------------------------------------------------------------
    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[str, bytes] | None:
        request_line = await reader.readline()
        if not request_line:
            return None
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length") or 0))
        parts = request_line.decode("latin-1").split()
        return (parts[1] if len(parts) > 1 else "/"), body

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                read = await self._read_request(reader)
                if read is None:
                    break
                path, raw = read
                if path == STATS_PATH:
                    writer.write(self._stats())
                    await writer.drain()
                    continue
                with self._lock:
                    body = json.loads(raw) if raw else {}
                    received = Received(len(self.requests) + 1, path, body)
                    self.requests.append(received)
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    done = await self._answer(reader, writer, received)
                finally:
                    with self._lock:
                        self.in_flight -= 1
                if not done:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _answer(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, received: Received
    ) -> bool:
        """Send the scripted reply; False when the connection is to be dropped."""
        scripted = received.path == COMPLETIONS_PATH
        reply = self.script(received) if scripted else Reply(status=404)
        if self.latency or reply.delay:
            await asyncio.sleep(self.latency + reply.delay)
        if reply.drop:
            return False
        if reply.hang:  # until the client gives up and closes, or hang_seconds
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(), self.hang_seconds)
            return False
        writer.write(self._response(received, reply))
        await writer.drain()
        with self._lock:
            self.answered += 1
        return True

    def _stats(self) -> bytes:
        with self._lock:
            stats = {"requests": len(self.requests), "answered": self.answered}
            stats["max_in_flight"] = self.max_in_flight
        body = json.dumps(stats).encode()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
        return (head + "\r\n\r\n").encode() + body

    def _response(self, received: Received, reply: Reply) -> bytes:
        if reply.raw_body is not None:
            body = reply.raw_body
        elif reply.status == 200:
            body = _completion(received, reply)
        else:
            body = json.dumps({"error": {"message": f"scripted {reply.status}"}}).encode()
        head = [
            f"HTTP/1.1 {reply.status} {REASONS.get(reply.status, 'Error')}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{name}: {value}" for name, value in reply.headers.items()),
        ]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def _serve(self) -> None:
        if self.fast:
            import uvloop  # (through uvicorn[standard]) serves ~2x the requests per CPU second

            loop = uvloop.new_event_loop()
        else:
            loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port, backlog=1024)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.close()

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._serve, name="llm-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._server is None:
            return
        self._loop.call_soon_threadsafe(self._server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per reply")
    args = parser.parse_args()
    server = ScriptedServer(latency=args.latency, fast=True).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
