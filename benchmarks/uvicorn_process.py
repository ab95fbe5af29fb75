"""A server of this project started as its own process for a benchmark, as in production."""

from __future__ import annotations

import re
import subprocess
import sys
import threading


def start_server(
    module_args: list[str], env: dict[str, str]
) -> tuple[subprocess.Popen, tuple[str, int]]:
    """`python -m <module_args>` (uvicorn on `--port 0`) and the (host, port) it listens on."""
    process = subprocess.Popen(
        [sys.executable, "-m", *module_args], env=env, stderr=subprocess.PIPE, text=True
    )
    for line in process.stderr:
        found = re.search(r"running on http://([\d.]+):(\d+)", line)
        if found:  # keep reading its log, or a full pipe would stall the server
            threading.Thread(target=lambda: [None for _ in process.stderr], daemon=True).start()
            return process, (found.group(1), int(found.group(2)))
    raise RuntimeError(f"{module_args[0]} did not start")
