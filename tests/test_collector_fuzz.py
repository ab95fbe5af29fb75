"""A fuzz suite for the collector's body parsing (issue 15, point 6), against a collector on
127.0.0.1: content types, JSON and msgpack, compressed, truncated, damaged or of the wrong type
bodies, and retries under idempotency keys. Whatever arrives: never a 5xx, the service stays
up, a refusal stores nothing, an acceptance stores exactly what it counted, every line of it
readable by ingestion, and nothing is stored twice. `ci` runs 300 bodies; for a long hunt,
`--hypothesis-profile=thorough` (20,000)."""

from __future__ import annotations

import gzip
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from collector_server import get, post, running_collector
from hypothesis import given
from hypothesis import strategies as st
from telemetry_strategies import BATCHES, JSONISH, encode

from bigaction_assets.telemetry.raw import read_batch
from bigaction_assets.telemetry_batches import batch_files

CONTENT_TYPES = st.sampled_from([
    "application/json", "application/json; charset=utf-8", "APPLICATION/JSON",
    "application/msgpack", "application/x-msgpack", "application/vnd.msgpack",
    "text/plain", "", "application/json5", "multipart/form-data; boundary=x",
]) | st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
            max_size=20)  # fmt: skip
ENCODINGS = st.one_of(st.none(), st.none(), st.none(),
                      st.sampled_from(["identity", "gzip", "br", "deflate", "x"]))  # fmt: skip
KEYS = st.sampled_from([None, None, "retry-1", "retry-2", '"retry-1"', "not a key", "é"])


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str]:
    """A body and the content type it claims: a batch as sent, or damaged, or not a batch."""
    batch = draw(BATCHES)
    shape = draw(st.sampled_from(["as_is", "truncated", "flipped", "gzip", "wrapped",
                                  "not_a_list", "bytes", "empty"]))  # fmt: skip
    sent = {"records": batch} if shape == "wrapped" else batch  # the other form a batch takes
    encoded = encode(sent, draw(st.sampled_from(["json", "msgpack"])))
    body, ctype = encoded if encoded is not None else (b"[]", "application/json")
    if shape == "truncated":
        body = body[: draw(st.integers(0, max(len(body) - 1, 0)))]
    elif shape == "flipped" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = body[:at] + bytes([body[at] ^ draw(st.integers(1, 255))]) + body[at + 1 :]
    elif shape == "gzip":
        body = gzip.compress(body)
    elif shape == "not_a_list":
        value = draw(JSONISH)
        body = (encode(value, "json") or (b"0", ""))[0]
    elif shape == "bytes":
        body = draw(st.binary(max_size=64))
    elif shape == "empty":
        body = b""
    return body, draw(st.one_of(st.just(ctype), st.just(ctype), st.just(ctype), CONTENT_TYPES))


def test_whatever_body_arrives_nothing_breaks_and_nothing_is_stored_twice(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    answered: dict[str, tuple[str, dict[str, Any]]] = {}  # key -> (digest, its 202)
    accepted: list[str] = []
    seen: Counter[int | str] = Counter()
    retries: list[tuple[bytes, str, str]] = []

    with running_collector(landing) as address:

        @given(sent=bodies(), encoding=ENCODINGS, key=KEYS, again=st.booleans())
        def send(
            sent: tuple[bytes, str], encoding: str | None, key: str | None, again: bool
        ) -> None:
            body, ctype = sent
            if again and retries:  # a client retrying a keyed batch it sent before
                body, ctype, key = retries[-1]
                encoding = None
            headers = {k: v for k, v in (("Content-Encoding", encoding),
                                         ("Idempotency-Key", key)) if v is not None}  # fmt: skip
            before = set(batch_files(landing))
            status, answer = post(address, "/v1/telemetry", body, ctype, headers)
            new = set(batch_files(landing)) - before
            assert status < 500, answer
            seen[status] += 1
            if status != 202:
                assert answer["error"] and not new, (status, answer)
                return
            bare = key.strip('"') if key else None
            digest = hashlib.sha256(ctype.split(";")[0].strip().lower().encode() + b"\n" + body)
            if bare in answered and answered[bare][0] == digest.hexdigest():
                assert answer == answered[bare][1] and not new, "a retry lands nothing"
                seen["retried"] += 1
                return
            assert bare not in answered, "a key sent with another body is refused"
            if bare:
                answered[bare] = (digest.hexdigest(), answer)
                retries.append((body, ctype, key))
            assert new == ({answer["batch_id"]} if answer["batch_id"] else set())
            if answer["batch_id"]:
                files = batch_files(landing)
                read = read_batch(answer["batch_id"], files[answer["batch_id"]])
                assert read.rejects == [] and len(read.rows) == answer["stored"]
                indexes = [row["record_index"] for row in read.rows]
                assert len(set(indexes)) == len(indexes), "no record stored twice"
                accepted.append(answer["batch_id"])

        send()
        assert get(address, "/healthz")[0] == 200, "still serving"
    assert seen[202] and seen[400] and seen[415] and seen[422] and seen["retried"], seen
    assert sorted(batch_files(landing)) == sorted(accepted)
    assert list(landing.rglob("*.tmp")) == [], "no temp file left behind"
