"""What the collector accepts, ingestion stores (issue 15, point 1): values the lake's contracts
cannot hold are refused with a 4xx naming the record and field, and a landed line ingestion
still cannot read (an older collector's, a damaged file) becomes a reject row while every
other batch lands. The property test posts hostile batches to a collector on 127.0.0.1 and
ingests every one it answered 202, through the same code and contracts as the assets."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import dagster as dg
import msgpack
import orjson
import pyarrow.dataset as ds
import pytest
from collector_server import post, running_collector
from conftest import DagsterLake, run_ingest
from hypothesis import given
from hypothesis import strategies as st
from telemetry_strategies import BATCHES, encode

from bigaction_assets.definitions import defs
from bigaction_assets.schemas import validated_table
from bigaction_assets.schemas.raw import RawRecordSchema
from bigaction_assets.schemas.standardized import (
    DomSnapshotSchema,
    EpisodeSchema,
    EventSchema,
    RejectSchema,
)
from bigaction_assets.schemas.telemetry import RawTelemetrySchema
from bigaction_assets.sources.telemetry import ADAPTER
from bigaction_assets.telemetry.raw import read_batch
from bigaction_assets.telemetry_batches import batch_day, batch_files, batch_path

DAY_BUILD = dg.AssetSelection.assets("raw_records") | dg.AssetSelection.groups("standardized")
TABLES = {"episodes": EpisodeSchema, "events": EventSchema, "dom_snapshots": DomSnapshotSchema,
          "rejects": RejectSchema}  # fmt: skip


def step(n: Any = 0, run: str = "r-1", **fields: Any) -> dict[str, Any]:
    return {"user_id": "u-1", "run_id": run, "step": n, "level": "MED", "version": "1.0",
            "url": "https://shop.example.com/a", **fields}  # fmt: skip


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


@pytest.fixture
def collector(landing: Path):
    with running_collector(landing) as address:
        yield address


REFUSED = {
    # the reported batch: msgpack carries an unsigned 64-bit step, raw_telemetry.step is Int64
    "step_2_64_minus_1_msgpack": (msgpack.packb([step(2**64 - 1)]), "msgpack", "records[0].step"),
    "step_2_63_json": (json.dumps([step(2**63)]).encode(), "json", "records[0].step"),
    "big_int_nested": (
        msgpack.packb([step(tab_info={"tabs": [2**64 - 1]})]), "msgpack", "tab_info.tabs[0]",
    ),
    "nan_cost": (msgpack.packb([step(total_step_cost=math.nan)]), "msgpack", "total_step_cost"),
    "infinite_box": (
        msgpack.packb([step(bounding_box={"x1": 0, "y1": 0, "x2": math.inf, "y2": 1})]),
        "msgpack", "bounding_box",
    ),
    # events.viewport_width is Int32: a 64-bit width cannot be stored
    "viewport_past_int32": (
        orjson.dumps([step(viewport_size={"width": 2**31, "height": 800})]), "json",
        "viewport_size",
    ),
    "action_names_not_strings": (
        orjson.dumps([step(level="LOW", action_names=[{"x": 1}])]), "json", "action_names",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_values_the_lake_cannot_hold_are_refused(collector, landing, case) -> None:
    body, encoding, field = REFUSED[case]
    status, answer = post(collector, "/v1/telemetry", body, f"application/{encoding}")
    assert status == 422, answer
    assert field in answer["error"], answer["error"]
    assert not landing.exists() or batch_files(landing) == {}


@pytest.mark.parametrize(
    "body, encoding",
    [
        (b'[{"user_id": "u-1", "run_id": "\\ud800", "step": 0, "level": "LOW"}]', "json"),
        (msgpack.packb([step(objective="\ud800")], unicode_errors="surrogatepass"), "msgpack"),
        (msgpack.packb([step(objective=b"\xff")], use_bin_type=False), "msgpack"),
    ],
    ids=["json_lone_surrogate", "msgpack_lone_surrogate", "msgpack_not_utf8"],
)
def test_strings_that_are_not_unicode_are_refused(collector, landing, body, encoding) -> None:
    status, answer = post(collector, "/v1/telemetry", body, f"application/{encoding}")
    assert status == 400 and "malformed" in answer["error"], answer
    assert not landing.exists() or batch_files(landing) == {}


def _ingested(landing: Path, batch_id: str) -> tuple[list[dict], Any]:
    """Raw telemetry rows and the standardized day of one landed batch, as the assets make
    them (no rejects allowed: what was accepted must be stored)."""
    path = batch_path(landing, batch_id)
    read = read_batch(batch_id, path)
    assert read.rejects == [], read.rejects
    day = run_ingest(ADAPTER, batch_day(batch_id), [path], landing)
    assert day.rows("rejects") == [], day.rows("rejects")
    assert [r for r in day.raw if r["error"]] == []
    return read.rows, day


def test_what_yaml_cannot_type_as_json_is_accepted_and_stored(collector, landing) -> None:
    """An action list YAML would read as a set, bytes, a date or a 65-bit integer used to be
    accepted and then fail the day's build (orjson cannot write a set): our reader keeps only
    JSON's values, so the code lands and is ingested (as code, or as actions)."""
    codes = [
        "- actions:\n    - action:\n        args: !!set {a: null}\n        name: click\n",
        "- actions:\n    - action:\n        args: {x: 2025-05-14, y: 99999999999999999999}\n"
        "        name: click\n",
        "- " * 30000,  # crashed libyaml's composer (SIGSEGV), and the worker with it
    ]
    batch = [step(n, code=code) for n, code in enumerate(codes)]
    status, answer = post(collector, "/v1/telemetry", orjson.dumps(batch))
    assert status == 202 and answer["stored"] == 3, answer
    rows, day = _ingested(landing, answer["batch_id"])
    assert len(rows) == 3
    kinds = {e["kind"] for e in day.rows("events")}
    assert {"api_action", "code_action"} <= kinds
    for name, model in TABLES.items():
        validated_table(model, day.rows(name)) if day.rows(name) else None


def test_whatever_the_collector_accepts_ingestion_stores(landing) -> None:
    """Hostile batches (numbers at and past every width, NaN, wrong types, deep nesting, lone
    surrogates, YAML that is no JSON), as JSON or msgpack: never a 5xx; a refusal writes
    nothing; every batch answered 202 is ingested without a reject, and all of it passes
    the tables' pandera contracts."""
    accepted: list[str] = []
    raw_rows: list[dict] = []
    tables: dict[str, list[dict]] = {"raw_records": [], **{name: [] for name in TABLES}}

    with running_collector(landing) as address:

        @given(batch=BATCHES, encoding=st.sampled_from(["json", "msgpack"]))
        def post_one(batch: list[dict], encoding: str) -> None:
            encoded = encode(batch, encoding)
            if encoded is None:
                return
            before = set(batch_files(landing))
            status, answer = post(address, "/v1/telemetry", *encoded)
            assert status < 500, answer
            new = set(batch_files(landing)) - before
            if status != 202:
                assert 400 <= status < 500 and answer["error"] and not new
                return
            if answer["batch_id"] is None:
                assert answer["stored"] == 0 and not new
                return
            assert new == {answer["batch_id"]}
            rows, day = _ingested(landing, answer["batch_id"])
            assert len(rows) == answer["stored"]
            accepted.append(answer["batch_id"])
            raw_rows.extend(rows)
            tables["raw_records"] += day.raw
            for name in TABLES:
                tables[name] += day.rows(name)

        post_one()

    assert accepted, "some hostile batches were valid enough to land"
    validated_table(RawTelemetrySchema, raw_rows)  # the contracts themselves, not our reading
    validated_table(RawRecordSchema, tables["raw_records"])
    unique = {"episodes": "episode_id", "dom_snapshots": "html_sha"}  # within a day, not across
    for name, model in TABLES.items():
        rows = tables[name]
        if name in unique:
            rows = list({row[unique[name]]: row for row in rows}.values())
        if rows:
            validated_table(model, rows)


def _older_collector_line(batch_id: str, step: int, run: str = "run-old") -> bytes:
    """A line as a collector without today's checks landed it."""
    envelope = {
        "batch_id": batch_id, "received_at": "2025-05-14T10:00:00+00:00", "record_index": 0,
        "level": "LOW", "user": "a" * 32, "session": "b" * 32, "run": run, "step": step,
        "key_id": "k", "dev_key": True, "scrubbed": {}, "dropped": [], "record": {"step": step},
    }  # fmt: skip
    return orjson.dumps(envelope) + b"\n"


def test_a_landed_batch_ingestion_cannot_read_is_a_reject_and_the_rest_lands(
    collector, landing, tmp_path, ephemeral_instance
) -> None:
    """The reported failure: a landed step of 2**64 - 1 made `raw_telemetry` fail on every run
    (polars: could not append value 18446744073709551615 of type i128), holding back every
    batch. Now that line, a damaged file and a file that is not UTF-8 JSON are rejects, and
    the good batches land, in raw_telemetry and through the day's build."""
    good = [post(collector, "/v1/telemetry", orjson.dumps([step(n)]))[1] for n in range(2)]
    day = batch_day(good[0]["batch_id"])
    stamp = good[0]["batch_id"][:8]
    bad = {
        f"{stamp}T000000000001Z-00000000000a": _older_collector_line(
            f"{stamp}T000000000001Z-00000000000a", 2**64 - 1
        ),
        f"{stamp}T000000000002Z-00000000000b": b'{"batch_id": "truncated',
        f"{stamp}T000000000003Z-00000000000c": b"\xff\xfe\x00garbage\n",
    }
    for batch_id, data in bad.items():
        batch_path(landing, batch_id).write_bytes(data)
    keys = sorted(batch_files(landing))
    ephemeral_instance.add_dynamic_partitions("telemetry_batches", keys)
    ephemeral_instance.add_dynamic_partitions("datasets", [f"telemetry.{day}"])
    code_location = defs()
    everything = [*code_location.assets, *code_location.asset_checks]
    target = DagsterLake(landing=landing, data=tmp_path / "data")
    ranged = {"dagster/asset_partition_range_start": keys[0],
              "dagster/asset_partition_range_end": keys[-1]}  # fmt: skip
    raw = dg.materialize(everything, instance=ephemeral_instance, tags=ranged,
                         resources={"lake": target.resource},
                         selection=["raw_telemetry", "telemetry_rejects"])  # fmt: skip
    assert raw.success
    stored = ds.dataset(target.root / "telemetry" / "raw_telemetry").to_table().to_pylist()
    assert sorted(r["batch_id"] for r in stored) == sorted(a["batch_id"] for a in good)
    rejects = ds.dataset(target.root / "telemetry" / "telemetry_rejects").to_table().to_pylist()
    assert {(r["batch_id"][-1], r["reason"]) for r in rejects} == {
        ("a", "unstorable"),
        ("b", "malformed_json"),
        ("c", "malformed_json"),
    }
    [step_reject] = [r for r in rejects if r["reason"] == "unstorable"]
    assert (
        "raw_telemetry.step" in step_reject["detail"]
        and "18446744073709551615" in (step_reject["detail"])
    )
    assert step_reject["user_pseudonym"] == "a" * 32  # so erasure can find it

    built = dg.materialize(
        everything, instance=ephemeral_instance, resources={"lake": target.resource},
        partition_key=f"telemetry.{day}",
        selection=DAY_BUILD,
    )  # fmt: skip
    assert built.success
    episodes = ds.dataset(target.root / "standardized" / "episodes").to_table().to_pylist()
    assert len(episodes) == 1 and orjson.loads(episodes[0]["details"])["steps"] == 2
    day_rejects = ds.dataset(target.root / "standardized" / "rejects").to_table().to_pylist()
    assert {r["reason"] for r in day_rejects} >= {"unstorable"}
