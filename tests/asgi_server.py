"""An ASGI app served for a test: uvicorn on 127.0.0.1, port 0, in a thread, stopped on exit."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def serving(
    app: Any, name: str, lifespan: str = "off", **options: Any
) -> Iterator[tuple[str, int]]:
    """(host, port) where `app` answers until the block ends; `lifespan="on"` runs the app's
    startup and shutdown (the collector starts and stops its landing workers there); `options`
    go to `uvicorn.Config`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan=lifespan, backlog=256, **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the {name} did not start")
        time.sleep(0.01)
    try:
        yield sock.getsockname()
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextmanager
def served_module(
    args: list[str], env: dict[str, str]
) -> Iterator[tuple[tuple[str, int], list[str]]]:
    """`python -m <args>`, a uvicorn app asked for port 0: its (host, port) and the lines of
    its stderr, which keep coming until the process has stopped (terminated on exit)."""
    process = subprocess.Popen(
        [sys.executable, "-m", *args], env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    log: list[str] = []
    reader: threading.Thread | None = None
    try:
        address = None
        for line in process.stderr:
            log.append(line)
            found = re.search(r"running on http://([\d.]+):(\d+)", line)
            if found:
                address = (found.group(1), int(found.group(2)))
                break
        if address is None:
            raise RuntimeError(f"{args[0]} did not start:\n{''.join(log)[-2000:]}")
        reader = threading.Thread(target=lambda: log.extend(process.stderr), daemon=True)
        reader.start()
        yield address, log
    finally:
        process.terminate()
        process.wait(timeout=30)
        if reader is not None:
            reader.join(timeout=5)  # the last lines, written while it stopped
