"""From a checked batch to the lines the landing area stores: each record's consent level
applied, its ids replaced by pseudonyms, and every remaining field scrubbed, in that order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.durable import write_durably
from bigaction_assets.privacy.actions import ActionLists
from bigaction_assets.privacy.levels import action_names, keep
from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.privacy.scrub import Scrubber, keyed_scrubber
from bigaction_assets.telemetry_batches import batch_path


@dataclass
class Intake:
    """What a batch became: the landing lines and what was dropped or scrubbed, by reason."""

    lines: list[bytes] = field(default_factory=list)
    owners: list[tuple[str, str]] = field(default_factory=list)
    """(user, session) pseudonyms of each line."""
    received: int = 0
    opted_out: int = 0
    forgotten: int = 0
    scrubbed: Counter[str] = field(default_factory=Counter)
    dropped_fields: Counter[str] = field(default_factory=Counter)

    @property
    def stored(self) -> int:
        return len(self.lines)

    def drop(self, pseudonyms: frozenset[str]) -> int:
        """Remove the lines of these senders (they asked to be forgotten); how many went."""
        kept = [(line, owner) for line, owner in zip(self.lines, self.owners, strict=True)
                if pseudonyms.isdisjoint(owner)]  # fmt: skip
        gone = len(self.lines) - len(kept)
        self.lines = [line for line, _ in kept]
        self.owners = [owner for _, owner in kept]
        self.forgotten += gone
        return gone

    def summary(self) -> dict[str, Any]:
        return {
            "received": self.received,
            "stored": self.stored,
            # a forgotten sender's steps look opted out: the answer tells no one who asked
            "opted_out": self.opted_out + self.forgotten,
            "scrubbed": dict(sorted(self.scrubbed.items())),
        }


def take_batch(
    records: list[dict[str, Any]],
    pseudonyms: Pseudonymizer,
    batch_id: str,
    received_at: str,
    forgotten: frozenset[str] = frozenset(),
) -> Intake:
    """Landing lines for the records whose sender consented and was not forgotten."""
    intake = Intake(received=len(records))
    scrubbers: dict[str, Scrubber] = {}
    for index, record in enumerate(records):
        level = record.get("level")
        if level in (None, "OFF"):  # no consent given is no consent
            intake.opted_out += 1
            continue
        session = pseudonyms.user(record["user_id"])
        user = pseudonyms.user(record.get("unique_user_id") or record["user_id"])
        if user in forgotten or session in forgotten:
            intake.forgotten += 1
            continue
        run = pseudonyms.run(record["user_id"], record["run_id"])
        body = {k: v for k, v in record.items() if k != "level"}
        actions = ActionLists()  # the record's action lists, each parsed once
        if level == "LOW" and isinstance(body.get("code"), str):  # higher levels keep the code
            body["action_names"] = action_names(body["code"], actions)
        kept, dropped = keep(body, level)
        scrubber = scrubbers.get(run) or scrubbers.setdefault(run, keyed_scrubber(pseudonyms, run))
        scrubber.add_passwords(record, actions)  # the whole record, not only what is kept
        before = Counter(scrubber.counts)
        clean = scrubber.value(kept)
        counts = scrubber.counts - before
        intake.scrubbed.update(counts)
        intake.dropped_fields.update(dropped)
        envelope = {
            "batch_id": batch_id, "received_at": received_at, "record_index": index,
            "level": level, "user": user, "session": session, "run": run,
            "step": record["step"], "key_id": pseudonyms.key_id, "dev_key": pseudonyms.dev,
            "scrubbed": dict(sorted(counts.items())), "dropped": dropped, "record": clean,
        }  # fmt: skip
        intake.lines.append(orjson.dumps(envelope) + b"\n")
        intake.owners.append((user, session))
    return intake


def land_records(
    landing: Path,
    records: list[dict[str, Any]],
    pseudonyms: Pseudonymizer,
    batch_id: str,
    received_at: str,
    forgotten: frozenset[str] = frozenset(),
) -> Intake:
    """`take_batch`, then the batch file written durably; landing a batch id again replaces
    its file, so one that keeps nothing now (its senders were forgotten) is removed."""
    intake = take_batch(records, pseudonyms, batch_id, received_at, forgotten)
    path = batch_path(landing, batch_id)
    if intake.lines:
        write_durably(path, b"".join(intake.lines))
    else:
        path.unlink(missing_ok=True)
    return intake
