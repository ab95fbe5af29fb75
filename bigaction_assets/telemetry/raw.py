"""Landed batches as `raw_telemetry` rows (and `telemetry_rejects` rows for what cannot be
stored), and the daily report over them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import orjson

from bigaction_assets.lake import Lake
from bigaction_assets.quality import has_table, relation
from bigaction_assets.schemas.telemetry import RawTelemetrySchema
from bigaction_assets.schemas.values import row_problem
from bigaction_assets.telemetry_batches import batch_day, episode_id


@dataclass
class BatchRead:
    """What one landed batch file gives `raw_telemetry`: its rows, and a reject row for each
    line (or the file) it could not store."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    rejects: list[dict[str, Any]] = field(default_factory=list)


class NotAnEnvelope(ValueError):
    """A JSON line that is not what the collector writes."""


def raw_row(batch_id: str, line_no: int, envelope: Any) -> dict[str, Any]:
    """The `raw_telemetry` row of one collector envelope (NotAnEnvelope when it is not one)."""
    try:
        day = batch_day(batch_id)
        record = envelope["record"]
        return {
            "batch_id": batch_id, "day": day, "received_at": envelope["received_at"],
            "record_index": envelope["record_index"], "line": line_no,
            "level": envelope["level"], "user_pseudonym": envelope["user"],
            "session_pseudonym": envelope["session"],
            "episode_id": episode_id(day, envelope["run"]), "step": envelope["step"],
            "origin": record.get("origin"), "version": record.get("version"),
            "key_id": envelope["key_id"], "dev_key": envelope["dev_key"],
            "scrubbed": orjson.dumps(envelope["scrubbed"]).decode(),
            "dropped": orjson.dumps(envelope["dropped"]).decode(),
            "record": orjson.dumps(record).decode(),
        }  # fmt: skip
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise NotAnEnvelope(f"not a collector envelope ({type(exc).__name__}: {exc})") from exc


def read_batch(
    batch_id: str,
    path: Path,
    skip: frozenset[str] = frozenset(),
    skipped: Counter[str] | None = None,
) -> BatchRead:
    """The rows of one landed batch file, but those of the pseudonyms in `skip` (counted by
    batch in `skipped`); any line (or the whole file) that cannot be stored as a row is a
    reject with its reason instead, so one damaged batch (an older collector's, a disk's)
    never stops the others."""
    read = BatchRead()
    day = batch_day(batch_id)

    def reject(line: int | None, reason: str, detail: str, envelope: Any = None) -> None:
        owner = envelope if isinstance(envelope, dict) else {}
        ids = {name: owner.get(key) if isinstance(owner.get(key), str) else None
               for name, key in (("user_pseudonym", "user"), ("session_pseudonym", "session"),
                                 ("episode_id", "run"))}  # fmt: skip
        if ids["episode_id"] is not None:
            ids["episode_id"] = episode_id(day, ids["episode_id"])
        read.rejects.append({"batch_id": batch_id, "day": day, "line": line, "reason": reason,
                             "detail": detail, **ids})  # fmt: skip

    try:
        with open(path, "rb") as handle:
            for line_no, line in enumerate(handle, start=1):
                try:
                    envelope = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    reject(line_no, "malformed_json", f"not JSON: {exc}")
                    continue
                owner = envelope if isinstance(envelope, dict) else {}
                if owner.get("user") in skip or owner.get("session") in skip:
                    if skipped is not None:
                        skipped[batch_id] += 1
                    continue
                try:
                    row = raw_row(batch_id, line_no, envelope)
                except NotAnEnvelope as exc:
                    reject(line_no, "not_an_envelope", str(exc), envelope)
                    continue
                problem = row_problem(RawTelemetrySchema, row)
                if problem is not None:
                    reject(line_no, "unstorable", problem, envelope)
                    continue
                read.rows.append(row)
    except OSError as exc:  # gone, a folder, unreadable: the batch is a reject, not a failure
        read.rows.clear()
        read.rejects.clear()
        reject(None, "unreadable_file", f"{type(exc).__name__} (errno {exc.errno}) reading it")
    return read


def daily_report(con: duckdb.DuckDBPyConnection, lake: Lake) -> list[dict[str, Any]]:
    """Per UTC day: batches, steps, episodes, senders, steps by level, placeholders by kind."""
    if not has_table(lake, "raw_telemetry", "telemetry"):
        return []
    raw = relation(lake, "raw_telemetry", "telemetry")
    cursor = con.execute(
        f"""
        with steps as (select * from {raw}),
        kinds as (
            select day, k.key as kind, sum(k.value::bigint) as n
            from steps, unnest(map_entries(scrubbed::json::map(varchar, bigint))) as t(k)
            group by all),
        levels as (select day, level, count(*) as n from steps group by all)
        select s.day, count(distinct batch_id) as batches, count(*) as steps,
               count(distinct episode_id) as episodes, count(distinct user_pseudonym) as senders,
               (select to_json(map(list(level order by level), list(n order by level)))
                  from levels l where l.day = s.day)::varchar as steps_by_level,
               coalesce((select to_json(map(list(kind order by kind), list(n order by kind)))
                  from kinds k where k.day = s.day)::varchar, '{{}}') as scrubbed_by_kind,
               count(*) filter (where dev_key) as dev_key_steps
        from steps s group by s.day order by s.day"""
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
