"""A real collector for tests: uvicorn serving the app on 127.0.0.1, port 0, in a thread."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from asgi_server import serving

from bigaction_assets.collector.app import CollectorSettings, create_app
from bigaction_assets.privacy.pseudonyms import Pseudonymizer

TEST_KEY = b"collector-test-key-0123456789abcdef"


@contextmanager
def running_collector(landing: Path, **settings: Any) -> Iterator[tuple[str, int]]:
    """(host, port) of a collector landing into `landing`; stopped on exit."""
    app = create_app(CollectorSettings(landing, Pseudonymizer(TEST_KEY), **settings))
    with serving(app, "collector", lifespan="on") as address:
        yield address


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
