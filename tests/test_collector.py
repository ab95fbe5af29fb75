"""The collector over real HTTP (uvicorn on 127.0.0.1, port 0): what it accepts and lands, what
it refuses (4xx, nothing written), forget requests, and 20 concurrent clients losing nothing."""

from __future__ import annotations

import http.client
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg
import msgpack
import orjson
import pyarrow.dataset as ds
import pytest
from collector_server import TEST_KEY, get, post, running_collector

from bigaction_assets.definitions import defs
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.privacy.pseudonyms import Pseudonymizer

LIMIT = 16 * 1024
EMAIL = "ana.garcia@example.org"


def step(user: str = "u-1", run: str = "r-1", n: int = 0, **fields) -> dict:
    return {"user_id": user, "run_id": run, "step": n, "level": "MED", "version": "1.2.3",
            "objective": f"Mail the invoice to {EMAIL}", "url": "https://shop.example.com/a",
            **fields}  # fmt: skip


def landed_files(landing: Path) -> list[Path]:
    return sorted(p for p in landing.rglob("*") if p.is_file())


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    return tmp_path / "landing"


@pytest.fixture
def collector(landing):
    with running_collector(landing, max_body_bytes=LIMIT, max_records=100) as address:
        yield address


def test_health(collector) -> None:
    assert get(collector, "/healthz") == (200, {"status": "ok", "dev_key": False})


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
def test_a_good_batch_lands_scrubbed_and_pseudonymized(collector, landing, encoding) -> None:
    batch = [step(n=0), step(n=1, level="LOW")]
    body, ctype = (
        (orjson.dumps(batch), "application/json")
        if encoding == "json"
        else (msgpack.packb(batch), "application/msgpack")
    )
    status, answer = post(collector, "/v1/telemetry", body, ctype)
    assert status == 202, answer
    assert answer["stored"] == 2 and answer["scrubbed"] == {"EMAIL": 1}
    (path,) = landed_files(landing)
    assert path.parent.parent == landing / "telemetry" and path.stem == answer["batch_id"]
    text = path.read_text()
    assert EMAIL not in text and "u-1" not in text and "r-1" not in text
    lines = [orjson.loads(line) for line in text.splitlines()]
    assert lines[0]["user"] == Pseudonymizer(TEST_KEY).user("u-1")
    assert lines[1]["record"] == {"version": "1.2.3", "url": "https://shop.example.com", "step": 1}


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _chunks(size: int):
    for _ in range(size // 1024):
        yield b" " * 1024


BAD = {
    "malformed_json": (b'[{"user_id": "u-1", ', "application/json", 400),
    "malformed_msgpack": (b"\x91\xc1", "application/msgpack", 400),
    "truncated_msgpack": (msgpack.packb([step()])[:-5], "application/msgpack", 400),
    "wrong_type_step": (orjson.dumps([step(n="1")]), "application/json", 422),
    "wrong_type_url": (orjson.dumps([step(url=42)]), "application/json", 422),
    "wrong_type_engine_log": (orjson.dumps([step(engine_log={"a": 1})]), "application/json", 422),
    "wrong_type_viewport": (
        orjson.dumps([step(viewport_size="1280x800")]),
        "application/json",
        422,
    ),
    "wrong_type_in_msgpack": (msgpack.packb([step(success="yes")]), "application/msgpack", 422),
    "unknown_level": (orjson.dumps([step(level="EVERYTHING")]), "application/json", 422),
    "lower_case_level": (orjson.dumps([step(level="high")]), "application/json", 422),
    "missing_user_id": (
        orjson.dumps([{"run_id": "r", "step": 0, "level": "LOW"}]),
        "application/json",
        422,
    ),
    "not_a_list": (orjson.dumps({"user_id": "u"}), "application/json", 422),
    "empty_batch": (b"[]", "application/json", 422),
    "one_bad_record_of_two": (orjson.dumps([step(), step(n=-1)]), "application/json", 422),
    "too_many_records": (orjson.dumps([step(n=i) for i in range(101)]), "application/json", 413),
    "oversized": (orjson.dumps([step(objective="x" * LIMIT)]), "application/json", 413),
    "not_json_or_msgpack": (b"user_id=u-1", "application/x-www-form-urlencoded", 415),
    # msgpack carries values JSON cannot: refused, not a crash on the way to the landing area
    "msgpack_bytes": (msgpack.packb([step(output=b"\xff\x00")]), "application/msgpack", 422),
    "msgpack_ext": (
        msgpack.packb([step(tab_info=msgpack.ExtType(5, b"x"))]),
        "application/msgpack",
        422,
    ),
    "msgpack_int_key": (
        msgpack.packb([step(engine_log=[{1: "x"}])], strict_types=False),
        "application/msgpack",
        400,
    ),
    "too_deep_json": (orjson.dumps([step(output=_nested(40))]), "application/json", 422),
    "too_deep_msgpack": (msgpack.packb([step(output=_nested(40))]), "application/msgpack", 422),
    "bad_utf8_json": (b'[{"user_id": "\xff"}]', "application/json", 400),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_batches_get_a_4xx_and_write_nothing(collector, landing, case) -> None:
    body, ctype, expected = BAD[case]
    status, answer = post(collector, "/v1/telemetry", body, ctype)
    assert status == expected, answer
    assert answer["error"], "the refusal says why"
    assert landed_files(landing) == []


def test_an_oversized_streamed_body_is_refused_while_read(collector, landing) -> None:
    connection = http.client.HTTPConnection(*collector, timeout=60)
    try:
        connection.request(
            "POST", "/v1/telemetry", body=_chunks(4 * LIMIT),
            headers={"Content-Type": "application/json"}, encode_chunked=True,
        )  # fmt: skip
        response = connection.getresponse()
        assert response.status == 413
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server stopped reading and closed: also a refusal
    finally:
        connection.close()
    assert landed_files(landing) == []


@pytest.mark.parametrize("level", ["OFF", None])
def test_opting_out_stores_nothing(collector, landing, level) -> None:
    record = step()
    record.pop("level") if level is None else record.update(level=level)
    status, answer = post(collector, "/v1/telemetry", orjson.dumps([record]))
    assert status == 202
    assert answer["stored"] == 0 and answer["opted_out"] == 1 and answer["batch_id"] is None
    assert landed_files(landing) == []


def test_forget_endpoint_records_and_refuses_later_data(collector, landing) -> None:
    status, answer = post(collector, "/v1/forget", orjson.dumps({"user_id": "u-gone"}))
    assert status == 202 and answer == {"status": "recorded"}
    (request,) = landed_files(landing)
    assert request.parent == landing / "forget"
    assert (
        request.stem == Pseudonymizer(TEST_KEY).user("u-gone")
        and "u-gone" not in request.read_text()
    )
    # asking again gets the same answer: the endpoint tells no one who asked before
    assert post(collector, "/v1/forget", orjson.dumps({"user_id": "u-gone"})) == (202, answer)
    status, gone = post(collector, "/v1/telemetry", orjson.dumps([step(user="u-gone")]))
    assert (status, gone["stored"]) == (202, 0)
    assert landed_files(landing) == [request]
    # and the forgotten sender's answer is an opted-out sender's: posting an id reveals nothing
    opted_out = post(collector, "/v1/telemetry", orjson.dumps([step(user="u-x", level="OFF")]))[1]
    assert gone == opted_out


@pytest.mark.parametrize("body", [b"{", b'{"user_id": 5}', b"[]", b'{"user_id": ""}'])
def test_bad_forget_requests_are_refused(collector, landing, body) -> None:
    status, answer = post(collector, "/v1/forget", body)
    assert 400 <= status < 500 and answer["error"]
    assert landed_files(landing) == []


CLIENTS, BATCHES, STEPS = 20, 50, 3


def test_concurrent_clients_lose_nothing(tmp_path, ephemeral_instance) -> None:
    landing = tmp_path / "landing"

    def client(number: int) -> list[str]:
        accepted = []
        for batch in range(BATCHES):
            records = [
                step(user=f"u-{number}", run=f"r-{number}-{batch}", n=i, level="LOW")
                for i in range(STEPS)
            ]
            status, answer = post(address, "/v1/telemetry", orjson.dumps(records))
            assert status == 202, answer
            accepted.append(answer["batch_id"])
        return accepted

    with running_collector(landing, workers=2) as address, ThreadPoolExecutor(CLIENTS) as pool:
        accepted = [b for batches in pool.map(client, range(CLIENTS)) for b in batches]
    assert len(set(accepted)) == CLIENTS * BATCHES
    files = {p.stem: p for p in (landing / "telemetry").rglob("*.jsonl")}
    assert set(files) == set(accepted)
    assert (
        sum(len(p.read_bytes().splitlines()) for p in files.values()) == CLIENTS * BATCHES * STEPS
    )

    keys = sorted(accepted)  # every accepted record reaches the lake after ingestion
    ephemeral_instance.add_dynamic_partitions("telemetry_batches", keys)
    code_location = defs()
    result = dg.materialize(
        [*code_location.assets, *code_location.asset_checks],
        instance=ephemeral_instance,
        resources={"lake": LakeResource(landing_dir=str(landing), data_dir=str(tmp_path / "data"))},
        selection=["raw_telemetry"],
        tags={
            "dagster/asset_partition_range_start": keys[0],
            "dagster/asset_partition_range_end": keys[-1],
        },
    )
    assert result.success
    lake = ds.dataset(tmp_path / "data" / "lake" / "telemetry" / "raw_telemetry", format="parquet")
    table = lake.to_table(columns=["batch_id", "record_index"])
    assert table.num_rows == CLIENTS * BATCHES * STEPS
    assert len(set(zip(*table.to_pydict().values(), strict=True))) == table.num_rows
    assert set(table["batch_id"].to_pylist()) == set(accepted)
