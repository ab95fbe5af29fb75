"""The telemetry landing area: `<landing>/telemetry/<YYYY-MM-DD>/<batch id>.jsonl`, one file per
accepted batch, written durably (`durable.write_durably`: temp file, fsync, rename, fsync of the
folder) so a batch the collector acknowledged survives a crash, and no reader ever sees half a
batch; and the episode id of a sender's run on one of those days."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from pathlib import Path

ADAPTER = "telemetry"
SUFFIX = ".jsonl"
BATCH_ID = re.compile(r"^(?P<day>\d{8})T\d{12}Z-[0-9a-f]{12}$")
DAY_FOLDER = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def episode_id(day: str, run: str) -> str:
    """A telemetry episode: one run of one sender on one UTC day."""
    return f"{ADAPTER}/{day}/{run}"


def telemetry_dir(landing: Path) -> Path:
    return landing / ADAPTER


def new_batch_id(received_at: datetime, nonce: str | None = None) -> str:
    """`<UTC time to the microsecond>Z-<12 hex>`: sorts by arrival, unique, a valid file name."""
    stamp = received_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S%f")
    return f"{stamp}Z-{nonce or uuid.uuid4().hex[:12]}"


def batch_day(batch_id: str) -> str:
    """The UTC day a batch arrived on, `YYYY-MM-DD`."""
    match = BATCH_ID.match(batch_id)
    if match is None:
        raise ValueError(f"{batch_id!r} is not a telemetry batch id")
    day = match.group("day")
    return f"{day[:4]}-{day[4:6]}-{day[6:]}"


def batch_path(landing: Path, batch_id: str) -> Path:
    return telemetry_dir(landing) / batch_day(batch_id) / f"{batch_id}{SUFFIX}"


def batch_files(landing: Path) -> dict[str, Path]:
    """Every landed batch, by id, in arrival order."""
    found: dict[str, Path] = {}
    root = telemetry_dir(landing)
    if not root.is_dir():
        return found
    for day in sorted(p for p in root.iterdir() if p.is_dir() and DAY_FOLDER.match(p.name)):
        for path in sorted(day.glob(f"*{SUFFIX}")):
            if BATCH_ID.match(path.stem):
                found[path.stem] = path
    return dict(sorted(found.items()))
