"""A real collector for tests: uvicorn serving the app on 127.0.0.1, port 0, in a thread."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import uvicorn

from bigaction_assets.collector.app import CollectorSettings, create_app
from bigaction_assets.privacy.pseudonyms import Pseudonymizer

TEST_KEY = b"collector-test-key-0123456789abcdef"


@contextmanager
def running_collector(landing: Path, **settings: Any) -> Iterator[tuple[str, int]]:
    """(host, port) of a collector landing into `landing`; stopped on exit."""
    app = create_app(CollectorSettings(landing, Pseudonymizer(TEST_KEY), **settings))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="on", backlog=256)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the collector did not start")
        time.sleep(0.01)
    try:
        yield sock.getsockname()
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def post(
    address: tuple[str, int],
    path: str,
    body: bytes,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) of one POST on a fresh connection."""
    connection = http.client.HTTPConnection(*address, timeout=60)
    try:
        connection.request(
            "POST", path, body=body, headers={"Content-Type": content_type, **(headers or {})}
        )
        response = connection.getresponse()
        return response.status, orjson.loads(response.read() or b"{}")
    finally:
        connection.close()


def get(address: tuple[str, int], path: str) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection(*address, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        connection.close()
