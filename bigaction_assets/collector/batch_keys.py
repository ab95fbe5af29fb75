"""Idempotency keys (`Idempotency-Key` request header): what the collector answered to each
keyed batch, kept durably under `<landing>/telemetry/.batch-keys/` (a hidden folder nothing
ingests), so a client's retry after a lost answer, a timeout or a restart gets the first answer
and the batch lands once. A record holds a hash of the key and of the body, the batch id and
the answer's counts: no sender's data."""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.durable import write_durably
from bigaction_assets.telemetry_batches import telemetry_dir

KEYS_DIR = ".batch-keys"
MAX_KEY_CHARS = 255
log = logging.getLogger("bigaction.collector")


def body_digest(body: bytes, content_type: str) -> str:
    """What a retry must match: the same bytes sent as the same media type."""
    media = content_type.split(";", 1)[0].strip().lower().encode()
    return hashlib.sha256(media + b"\n" + body).hexdigest()


def parse_key(header: str | None) -> str | None:
    """The key of an `Idempotency-Key` header (a quoted string as the IETF draft writes it, or
    bare as most APIs take it); ValueError when it is not 1-255 visible ASCII characters."""
    if header is None:
        return None
    key = header.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if not 0 < len(key) <= MAX_KEY_CHARS or not all("!" <= c <= "~" for c in key):
        raise ValueError("an Idempotency-Key is 1-255 visible ASCII characters, e.g. a UUID")
    return key


@dataclass(frozen=True)
class KeyRecord:
    digest: str
    batch_id: str
    received_at: str
    answer: dict[str, Any]


class BatchKeys:
    """The keys one landing folder remembers, one small file per key."""

    def __init__(self, landing: Path) -> None:
        self.folder = telemetry_dir(landing) / KEYS_DIR

    def _path(self, key: str) -> Path:
        name = hashlib.sha256(key.encode()).hexdigest()
        return self.folder / name[:2] / f"{name}.json"

    def get(self, key: str) -> KeyRecord | None:
        try:
            value = orjson.loads(self._path(key).read_bytes())
            return KeyRecord(
                value["digest"], value["batch_id"], value["received_at"], value["answer"]
            )
        except FileNotFoundError:
            return None
        except (orjson.JSONDecodeError, KeyError, TypeError) as exc:  # damaged: as if unknown
            log.error("an idempotency record is unreadable (%s); treating it as new", exc)
            return None

    def remember(
        self, key: str, digest: str, batch_id: str, received_at: str, answer: dict[str, Any]
    ) -> None:
        """Record, durably, the answer a batch gets under `key`."""
        record = {"digest": digest, "batch_id": batch_id, "received_at": received_at,
                  "answer": answer}  # fmt: skip
        write_durably(self._path(key), orjson.dumps(record))

    def forget_older_than(self, days: float) -> int:
        """Drop the records of keys older than `days`; how many went."""
        if not self.folder.is_dir():
            return 0
        cutoff, gone = time.time() - days * 86400, 0
        for path in self.folder.glob("*/*.json"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    gone += 1
            except FileNotFoundError:
                continue
        return gone
