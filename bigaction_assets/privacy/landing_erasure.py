"""Erasing forgotten senders' lines from the telemetry batches in the landing area (a local
folder, shared in a cluster: the collector writes it, the pipeline reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bigaction_assets.durable import write_durably
from bigaction_assets.telemetry_batches import batch_day, batch_files, episode_id


@dataclass
class LandingErasure:
    records: int = 0
    files_rewritten: int = 0
    files_removed: int = 0
    episodes: dict[str, set[str]] = field(default_factory=dict)
    """Episodes erased, by the forgotten pseudonym they belonged to."""


def _owner(envelope: object, pseudonyms: frozenset[str]) -> str | None:
    """The forgotten pseudonym a landed line belongs to, if any."""
    if not isinstance(envelope, dict):
        return None
    for name in ("user", "session"):
        if envelope.get(name) in pseudonyms:
            return envelope[name]
    return None


def erase_landing(landing: Path, pseudonyms: frozenset[str]) -> LandingErasure:
    """Remove the senders' lines from every landed batch; a batch left empty is deleted."""
    report = LandingErasure()
    if not pseudonyms:
        return report
    for batch_id, path in batch_files(landing).items():
        kept: list[bytes] = []
        erased = 0
        with open(path, "rb") as handle:
            for line in handle:
                value = orjson.loads(line) if line.strip() else None
                owner = _owner(value, pseudonyms)
                if owner is not None:
                    erased += 1
                    episodes = report.episodes.setdefault(owner, set())
                    if isinstance(value.get("run"), str):  # a damaged line may have none
                        episodes.add(episode_id(batch_day(batch_id), value["run"]))
                else:
                    kept.append(line)
        if not erased:
            continue
        report.records += erased
        if kept:
            write_durably(path, b"".join(kept))
            report.files_rewritten += 1
        else:
            path.unlink()
            report.files_removed += 1
    return report
