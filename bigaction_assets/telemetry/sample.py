"""The bundled telemetry sample (batches as clients post them) landed through the same intake
as the collector, with batch ids and arrival times taken from the sample so reruns are
byte-identical."""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.privacy.pseudonyms import Pseudonymizer
from bigaction_assets.settings import PROJECT_ROOT
from bigaction_assets.telemetry.intake import land_records
from bigaction_assets.telemetry.validate import check_batch
from bigaction_assets.telemetry_batches import new_batch_id

SAMPLE = PROJECT_ROOT / "samples" / "telemetry" / "client_batches.jsonl"


def _arrival(records: list[dict[str, Any]]) -> datetime:
    """When the sample says the batch was sent: its last step's `date`."""
    dates = [r["date"] for r in records if isinstance(r.get("date"), str)]
    return datetime.fromisoformat(max(dates).replace("Z", "+00:00")).astimezone(UTC)


def land_sample(
    landing: Path,
    pseudonyms: Pseudonymizer,
    sample: Path = SAMPLE,
    forgotten: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Land every batch of the sample but the records of the `forgotten` pseudonyms, as the
    collector would take it now; what was stored, opted out, withheld and scrubbed, in total."""
    totals: Counter[str] = Counter()
    scrubbed: Counter[str] = Counter()
    for line in sample.read_bytes().splitlines():
        records = check_batch(orjson.loads(line))
        arrival = _arrival(records)
        batch_id = new_batch_id(arrival, hashlib.sha256(line).hexdigest()[:12])
        intake = land_records(
            landing, records, pseudonyms, batch_id, arrival.isoformat(), forgotten
        )
        totals.update(batches=1, received=intake.received, stored=intake.stored)
        totals.update(opted_out=intake.opted_out, forgotten=intake.forgotten)
        scrubbed.update(intake.scrubbed)
    return {**totals, "scrubbed": dict(sorted(scrubbed.items()))}
