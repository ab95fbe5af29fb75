"""Agent telemetry as the collector lands it: a dataset is one UTC day
(`<landing>/telemetry/<YYYY-MM-DD>/<batch id>.jsonl`, already filtered, pseudonymized and
scrubbed), and each run of a sender that day is one episode, `telemetry/<day>/<run pseudonym>`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bigaction_assets.sources.base import ParsedRecord, Rejection, StandardRecord
from bigaction_assets.sources.jsonstream import iter_jsonl_records
from bigaction_assets.sources.raw_text import RawText
from bigaction_assets.telemetry.storable import build_episode, run_failures
from bigaction_assets.telemetry_batches import ADAPTER as ADAPTER_NAME
from bigaction_assets.telemetry_batches import (
    BATCH_ID,
    DAY_FOLDER,
    SUFFIX,
    batch_day,
    episode_id,
)

SOURCE = "telemetry"


class TelemetryAdapter:
    name = ADAPTER_NAME
    description = "Agent telemetry landed by the collector: one dataset per UTC day of batches."
    suffixes = (SUFFIX,)
    # Batches arrive all day: the telemetry sensor and daily schedule build a day once it is
    # over, so the landing sensor leaves these datasets alone.
    arrives_continuously = True
    # Senders' texts (scrubbed, but theirs): kept out of Dagster's run metadata, which
    # forgetting cannot rewrite; only the lake holds them.
    holds_personal_data = True

    def dataset_files(self, folder: Path) -> dict[str, list[Path]]:
        if not folder.is_dir():
            return {}
        days: dict[str, list[Path]] = {}
        for day in sorted(p for p in folder.iterdir() if p.is_dir() and DAY_FOLDER.match(p.name)):
            files = sorted(p for p in day.glob(f"*{SUFFIX}") if BATCH_ID.match(p.stem))
            if files:
                days[day.name] = files
        return days

    def source_name(self, dataset: str) -> str:
        return SOURCE

    def read(self, path: Path) -> Iterator[RawText]:
        return iter_jsonl_records(path, self.record_id)

    def redistributable(self, dataset: str) -> bool:
        return True  # senders chose a level to share their runs for open datasets

    def record_id(self, value: Any) -> str | None:
        """`<episode id>#<step>`, so erasure and checks can tie a raw record to its episode."""
        try:
            day = batch_day(value["batch_id"])
            return f"{episode_id(day, value['run'])}#{value['step']}"
        except (TypeError, KeyError, ValueError):
            return None

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection]:
        runs: dict[str, list[ParsedRecord]] = {}
        for record in records:
            value = record.value
            if not isinstance(value, dict) or not isinstance(value.get("run"), str):
                yield Rejection(record, "missing_field", "a telemetry line has no `run`")
                continue
            runs.setdefault(value["run"], []).append(record)
        for run, parsed in runs.items():
            # a line ingestion cannot store is a reject, never a failed run of the whole day
            failures = run_failures(dataset, run, [p.value for p in parsed])
            for index, failure in sorted(failures.items()):
                yield Rejection(parsed[index], failure.reason, failure.detail)
            parsed = [p for i, p in enumerate(parsed) if i not in failures]
            episode, failure = build_episode(dataset, run, [p.value for p in parsed])
            if episode is None:
                for record in parsed if failure else []:
                    yield Rejection(record, failure.reason, failure.detail)
                continue
            yield StandardRecord(
                episode={
                    "source": SOURCE,
                    "source_format": ADAPTER_NAME,
                    "source_split": None,
                    "source_id": f"{dataset}/{run}",
                    "task": episode["task"],
                    "website": _website(episode["events"]),
                    "domain": None,
                    "subdomain": None,
                    "details": episode["details"],
                },
                events=episode["events"],
                snapshots=episode["pages"],
                origin=parsed[0],
            )


def _website(events: list[dict[str, Any]]) -> str | None:
    for event in events:
        url = event.get("url")
        if url and "://" in url:
            return url.split("://", 1)[1].split("/", 1)[0] or None
    return None


ADAPTER = TelemetryAdapter()
