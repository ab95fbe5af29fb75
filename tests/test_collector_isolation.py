"""One hostile batch must not hurt other senders (issue 15, point 2), shown on collectors
served on 127.0.0.1: a batch that crashes its worker costs only its own sender a refusal
while concurrent batches land; a batch that landed before its worker died is answered 202
and lands once; a client's retry under the same `Idempotency-Key` gets the first answer and
lands nothing twice, across restarts; temp files a killed writer left are removed at start."""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
from collector_server import post, running_collector
from crashing_lander import CRASH, CRASH_ONCE_AFTER_LANDING, CrashingLander

from bigaction_assets.telemetry_batches import batch_files

CLIENTS, BATCHES = 8, 3


def batch(user: str, n: int = 0, **fields: Any) -> bytes:
    record = {"user_id": user, "run_id": f"run-{user}", "step": n, "level": "MED",
              "objective": "Find the opening hours", **fields}  # fmt: skip
    return orjson.dumps([record])


def landed_lines(landing: Path) -> list[dict]:
    return [orjson.loads(line) for path in batch_files(landing).values()
            for line in path.read_bytes().splitlines()]  # fmt: skip


def test_the_yaml_bomb_no_longer_crashes_the_process_that_reads_it() -> None:
    """`"- " * 30000` as a record's code made libyaml's composer recurse until the process died
    (SIGSEGV); our reader stops at its depth bound. In a child process, so a crash shows as
    its exit status instead of taking the test runner with it."""
    code = (
        "from bigaction_assets.privacy.actions import load_actions\n"
        "from bigaction_assets.privacy.levels import action_names\n"
        "assert load_actions('- ' * 30000) is None\n"
        "print(action_names('- ' * 30000))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])


HOSTILE = {
    "yaml_bomb": batch("mallory", level="LOW", code="- " * 30000),  # crashed the worker before
    "injected_crash": batch("mallory", output=CRASH.decode()),  # any crash of native code
}


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_a_batch_that_crashes_its_worker_costs_only_its_sender(tmp_path, hostile) -> None:
    landing = tmp_path / "landing"
    with running_collector(landing, workers=2, lander=CrashingLander) as address:

        def client(number: int) -> list[tuple[int, dict]]:
            answers = []
            for n in range(BATCHES):
                answers.append(post(address, "/v1/telemetry", batch(f"u-{number}", n)))
                if number == 0 and n == 1:
                    answers.append(post(address, "/v1/telemetry", HOSTILE[hostile]))
            return answers

        with ThreadPoolExecutor(CLIENTS) as pool:
            answers = [a for per_client in pool.map(client, range(CLIENTS)) for a in per_client]
    hostile_answer = answers[2]
    others = answers[:2] + answers[3:]
    assert [status for status, _ in others] == [202] * CLIENTS * BATCHES, others
    if hostile == "injected_crash":
        assert hostile_answer[0] == 422 and "crashed" in hostile_answer[1]["error"]
    else:  # read as code, not as an action list: stored like any batch
        assert hostile_answer[0] == 202
    landed = landed_lines(landing)
    ids = [answer["batch_id"] for _, answer in others]
    assert sorted(line["batch_id"] for line in landed if line["step"] is not None) == sorted(
        ids + ([hostile_answer[1]["batch_id"]] if hostile_answer[0] == 202 else [])
    ), "every accepted batch landed, once"


def test_a_batch_landed_before_its_worker_died_is_answered_and_lands_once(tmp_path) -> None:
    landing = tmp_path / "landing"
    body = batch("ana", output=CRASH_ONCE_AFTER_LANDING.decode())
    with running_collector(landing, workers=1, lander=CrashingLander) as address:
        status, answer = post(address, "/v1/telemetry", body)
        assert status == 202, answer
        assert post(address, "/v1/telemetry", batch("ben"))[0] == 202, "the workers came back"
    assert len(list(tmp_path.glob("died-once-*"))) == 1, "the worker did die after landing"
    assert [line["batch_id"] for line in landed_lines(landing)].count(answer["batch_id"]) == 1
    assert len(batch_files(landing)) == 2


def test_a_retry_under_the_same_key_gets_the_first_answer_and_lands_once(tmp_path) -> None:
    landing = tmp_path / "landing"
    key = {"Idempotency-Key": '"8e03978e-40d5-43e8-bc93-6894a57f9324"'}
    body = batch("ana")
    with running_collector(landing) as address:
        first = post(address, "/v1/telemetry", body, headers=key)
        assert first[0] == 202, first
        assert post(address, "/v1/telemetry", body, headers=key) == first
        other = post(address, "/v1/telemetry", batch("ana", 1), headers=key)
        assert other[0] == 422 and "Idempotency-Key" in other[1]["error"]
        unkeyed = post(address, "/v1/telemetry", body)
        assert unkeyed[0] == 202 and unkeyed[1]["batch_id"] != first[1]["batch_id"]
        bad_key = post(address, "/v1/telemetry", body, headers={"Idempotency-Key": "é" * 3})
        assert bad_key[0] == 400
    with running_collector(landing, workers=1) as address:  # a restart remembers it
        assert post(address, "/v1/telemetry", body, headers=key) == first
    assert sorted(batch_files(landing)) == sorted([first[1]["batch_id"], unkeyed[1]["batch_id"]])
    assert len(landed_lines(landing)) == 2


def test_a_key_past_its_time_is_forgotten_at_start(tmp_path) -> None:
    landing = tmp_path / "landing"
    key = {"Idempotency-Key": "old-key"}
    with running_collector(landing) as address:
        first = post(address, "/v1/telemetry", batch("ana"), headers=key)
    [record] = (landing / "telemetry" / ".batch-keys").rglob("*.json")
    os.utime(record, (0, 0))
    with running_collector(landing, key_days=7) as address:
        again = post(address, "/v1/telemetry", batch("ana"), headers=key)
    assert again[0] == 202 and again[1]["batch_id"] != first[1]["batch_id"]


def test_orphaned_temp_files_are_removed_at_start(tmp_path, caplog) -> None:
    landing = tmp_path / "landing"
    orphans = [
        landing / "telemetry" / "2025-05-14" / ".20250514T100000000000Z-0.jsonl.1f2e.tmp",
        landing / "telemetry" / ".batch-keys" / "ab" / ".ab12.json.77aa.tmp",
        landing / "forget" / f".{'c' * 32}.json.9d9d.tmp",
    ]
    live = landing / "telemetry" / "2025-05-14" / ".20250514T110000000000Z-1.jsonl.5a5a.tmp"
    for path in [*orphans, live]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"half": ')
    other = landing / "adp" / ".notes.tmp"  # not a folder the collector writes
    other.parent.mkdir(parents=True)
    other.write_bytes(b"")
    with open(live, "rb") as held, caplog.at_level(logging.WARNING, "bigaction.collector"):
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a writer still at work holds its file
        with running_collector(landing) as address:
            assert post(address, "/v1/telemetry", batch("ana"))[0] == 202
    assert [path.exists() for path in orphans] == [False, False, False]
    assert live.exists() and other.exists()
    for path in orphans:
        assert str(path) in caplog.text
