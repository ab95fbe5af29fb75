"""A forget request holds wherever data enters, without Dagster: landing the bundled sample
again, the collector's look at the requests, reading landing records into raw rows, and what a
rerun of `make demo` counts as changed."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from collector_server import TEST_KEY, post, running_collector

from bigaction_assets import ingest
from bigaction_assets.collector import lander as lander_module
from bigaction_assets.durable import write_durably
from bigaction_assets.privacy.erasure import Forgotten
from bigaction_assets.privacy.forget import ForgetRegistry, forget_dir, record_request
from bigaction_assets.privacy.pseudonyms import DEV_KEY, Pseudonymizer
from bigaction_assets.privacy.withhold import SenderFilter
from bigaction_assets.rerun.inputs import dataset_roots
from bigaction_assets.sources.telemetry import ADAPTER as TELEMETRY
from bigaction_assets.telemetry.sample import land_sample
from bigaction_assets.telemetry_batches import batch_files

DEV = Pseudonymizer(DEV_KEY.encode("utf-8"), dev=True)
ANA = DEV.user("ana.garcia@example.org")  # 3 steps of the sample, in 2 of its 8 batches
DAY = "2025-05-14"


def landed(landing: Path) -> dict[str, bytes]:
    return {batch: path.read_bytes() for batch, path in batch_files(landing).items()}


def test_landing_the_sample_again_leaves_a_forgotten_sender_out(tmp_path) -> None:
    assert land_sample(tmp_path, DEV)["stored"] == 9
    assert sum(ANA.encode() in text for text in landed(tmp_path).values()) == 2
    others = {b: t for b, t in landed(tmp_path).items() if ANA.encode() not in t}

    again = land_sample(tmp_path, DEV, forgotten=frozenset({ANA}))

    assert (again["stored"], again["forgotten"]) == (6, 3)
    # her two batches (hers alone) are gone; the other senders' are left as they were
    assert landed(tmp_path) == others and len(others) == 4


def test_the_collector_sees_two_requests_made_within_one_clock_tick(tmp_path) -> None:
    registry = ForgetRegistry(tmp_path)
    record_request(tmp_path, "a" * 32, via="api")
    assert registry.current() == {"a" * 32}
    folder = forget_dir(tmp_path)
    tick = folder.stat().st_mtime_ns
    record_request(tmp_path, "b" * 32, via="api")
    os.utime(folder, ns=(tick, tick))  # a coarse file system clock: the folder looks unchanged
    assert registry.current() == {"a" * 32, "b" * 32}


def test_a_batch_mixing_a_forgotten_sender_with_others_lands_only_the_others(tmp_path) -> None:
    landing = tmp_path / "landing"
    gone, kept = "u-gone@example.org", "u-kept"
    batch = [
        {"user_id": kept, "run_id": "r-1", "step": 0, "level": "MED", "objective": "Buy a mug"},
        {"user_id": "x", "unique_user_id": gone, "run_id": "r-2", "step": 0, "level": "HIGH",
         "objective": "Pay rent to DE89 3704 0044 0532 0130 00", "html": "<p>Rent</p>"},
    ]  # fmt: skip
    with running_collector(landing, workers=1) as address:
        assert post(address, "/v1/forget", orjson.dumps({"user_id": gone}))[0] == 202
        status, answer = post(address, "/v1/telemetry", orjson.dumps(batch))
    assert status == 202 and (answer["stored"], answer["opted_out"]) == (1, 1)
    [path] = batch_files(landing).values()
    text = path.read_bytes()
    pseudonyms = Pseudonymizer(TEST_KEY)
    assert pseudonyms.user(kept).encode() in text
    for theirs in (pseudonyms.user(gone), pseudonyms.user("x"), "Rent", "Pay rent", "IBAN"):
        assert theirs.encode() not in text, theirs
    assert len(text.splitlines()) == 1


def test_a_request_made_while_their_batch_is_scrubbed_keeps_it_off_the_disk(
    tmp_path, monkeypatch
) -> None:
    landing = tmp_path / "landing"
    pseudonyms = Pseudonymizer(TEST_KEY)
    real_take = lander_module.take_batch
    written: list[bytes] = []

    def take_then_asked(*args, **kwargs):
        intake = real_take(*args, **kwargs)
        record_request(landing, pseudonyms.user("u-gone"), via="api")  # while it was scrubbed
        return intake

    def spy(path: Path, data: bytes) -> None:
        written.append(data)
        write_durably(path, data)

    monkeypatch.setattr(lander_module, "take_batch", take_then_asked)
    monkeypatch.setattr(lander_module, "write_durably", spy)
    batch = [{"user_id": "u-gone", "run_id": "r", "step": 0, "level": "MED", "objective": "Rent"}]
    lander = lander_module.Lander(lander_module.CollectorSettings(landing, pseudonyms))

    answer = lander.land(orjson.dumps(batch), "application/json")

    assert (answer.status, answer.body["stored"], answer.body["opted_out"]) == (202, 0, 1)
    assert written == [] and batch_files(landing) == {}, "not even written, then removed"


def test_reading_landing_records_withholds_a_forgotten_senders_and_counts_them(tmp_path) -> None:
    land_sample(tmp_path, DEV)
    first = next(iter(batch_files(tmp_path).values()))
    # a line too damaged to read (no run, cut short): only its text says whose it is
    first.write_bytes(first.read_bytes() + b'{"user": "' + ANA.encode() + b'", "step": 7\n')
    files = TELEMETRY.dataset_files(tmp_path / "telemetry")[DAY]

    withhold = SenderFilter(Forgotten(frozenset({ANA})))
    rows = list(ingest.raw_records(TELEMETRY, DAY, files, tmp_path, withhold))

    assert withhold.withheld == 4
    assert len(rows) == 6 and not any(ANA.encode() in row["text"] for row in rows)
    everyone = list(ingest.raw_records(TELEMETRY, DAY, files, tmp_path))
    assert len(everyone) == 10, "without a request nothing is withheld"


def test_a_forget_request_changes_what_personal_datasets_are_built_from_only(tmp_path) -> None:
    land_sample(tmp_path, DEV)
    public = tmp_path / "adp" / "synatra.json"
    public.parent.mkdir()
    public.write_text("[]")
    found = {f"telemetry.{DAY}": TELEMETRY.dataset_files(tmp_path / "telemetry")[DAY],
             "adp.synatra": [public]}  # fmt: skip
    before = dataset_roots(found, tmp_path)

    record_request(tmp_path, ANA, via="cli")
    after = dataset_roots(found, tmp_path)

    assert after["adp.synatra"] == before["adp.synatra"], "a public dataset holds no sender"
    assert after[f"telemetry.{DAY}"] != before[f"telemetry.{DAY}"]
    assert dataset_roots(found, tmp_path) == after, "and it stays so until the next request"
