"""Ingest: bad input never kills the run and is never dropped silently; ids are stable."""

from __future__ import annotations

import gc
import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import land_file

from bigaction_assets import ingest, standardized_rows
from bigaction_assets.gc_pause import collection_paused
from bigaction_assets.sources import adapters
from bigaction_assets.sources.adp import ADAPTER


def good(record_id: str, text: str = "hello") -> bytes:
    return orjson.dumps(
        {
            "id": record_id,
            "content": [
                {"class_": "text_observation", "content": text, "source": "user"},
                {"class_": "message_action", "content": f"re: {text}", "description": None},
            ],
            "details": {},
        }
    )


def land(tmp_path: Path, name: str, data: bytes) -> tuple[Path, Path]:
    landing = tmp_path / "landing"
    return landing, land_file(landing, "adp", name, data)


# (line bytes, expected reject as (reason, stage)) in file order; None for a good record
MIXED: list[tuple[bytes, tuple[str, str] | None]] = [
    (good("g1"), None),
    (b'{"id": "m1", "content": [}', ("malformed_json", "read")),
    (good("g2"), None),
    (b'{"id": "f1", "details": {}}', ("missing_field", "standardize")),
    (b'{"id": "u1", "content": [{"class_": "video_observation"}]}',
     ("unknown_class", "standardize")),
    (b"", None),  # a blank line is not a record, but it counts for line numbers
    (good("g3"), None),
    (b'{"id": "w1", "content": [{"class_": "text_observation", "content": 42}]}',
     ("wrong_type", "standardize")),
    (b'{"id": "b1", "content": [{"class_": "text_observation", "content": "caf\xe9"}]}',
     ("invalid_utf8", "read")),
    (good("g4"), None),
    (b'{"id": "t1", "content": [{"class_": "text_observation", "content": "cut of',
     ("truncated", "read")),
]  # fmt: skip


@pytest.fixture
def mixed(tmp_path, ingest_dataset):
    data = b"\n".join(line for line, _ in MIXED)  # no newline after the truncated record
    landing, path = land(tmp_path, "mixed.jsonl", data)
    return ingest_dataset(ADAPTER, "mixed", [path], landing)


def test_every_good_record_becomes_an_episode(mixed):
    episodes = mixed.rows("episodes")
    assert [e["episode_id"] for e in episodes] == ["mixed/g1", "mixed/g2", "mixed/g3", "mixed/g4"]
    assert {e["dataset"] for e in episodes} == {"adp.mixed"}
    assert [e["source_record"] for e in episodes] == [0, 2, 5, 8]
    assert all(e["source_file"] == "adp/mixed.jsonl" for e in episodes)
    assert len(mixed.rows("events")) == 8


def test_one_reject_per_bad_record(mixed):
    expected = [
        {
            "file": "adp/mixed.jsonl",
            "line": line_no,
            "reason": outcome[0],
            "stage": outcome[1],
            "raw_text": line.decode("utf-8", errors="backslashreplace"),
        }
        for line_no, (line, outcome) in enumerate(MIXED, start=1)
        if outcome is not None
    ]
    rejects = sorted(mixed.rows("rejects"), key=lambda r: r["line"])
    assert [{key: r[key] for key in expected[0]} for r in rejects] == expected
    assert all(
        r["dataset"] == "adp.mixed" and r["source_format"] == "adp" and r["source"] == "mixed"
        for r in rejects
    )
    assert all(r["detail"] for r in rejects)
    assert "\\xe9" in next(r["raw_text"] for r in rejects if r["reason"] == "invalid_utf8")


def test_nothing_is_dropped(mixed):
    assert len(mixed.raw) == sum(1 for line, _ in MIXED if line)
    assert len(mixed.rows("episodes")) + len(mixed.rows("rejects")) == len(mixed.raw)
    rejected = {(r["file"], r["record_index"]) for r in mixed.rows("rejects")}
    kept = {(e["source_file"], e["source_record"]) for e in mixed.rows("episodes")}
    assert rejected.isdisjoint(kept)
    assert rejected | kept == {(r["file"], r["record_index"]) for r in mixed.raw}


def test_raw_records_mark_read_errors(mixed):
    by_line = {r["line"]: r for r in mixed.raw}
    assert by_line[1]["record_id"] == "g1" and by_line[1]["error"] is None
    assert by_line[2]["error"] == "malformed_json" and by_line[2]["record_id"] is None
    assert by_line[4]["record_id"] == "f1"  # readable, rejected later
    assert by_line[9]["error"] == "invalid_utf8"
    assert by_line[11]["error"] == "truncated"


@pytest.mark.parametrize(
    "record",
    [
        b'{"id": "big", "content": 5, "pad": "' + b"x" * 10_000 + b'"}',  # standardize stage
        b'{"id": "big", "content": [' + b"x" * 10_000 + b"]}",  # read stage
    ],
    ids=["wrong_type", "malformed_json"],
)
def test_reject_text_is_bounded(tmp_path, ingest_dataset, record):
    landing, path = land(tmp_path, "big.jsonl", good("ok") + b"\n" + record + b"\n")
    result = ingest_dataset(ADAPTER, "big", [path], landing)
    [reject] = result.rows("rejects")
    assert len(reject["raw_text"]) == standardized_rows.REJECT_TEXT_CHARS == 4_000
    assert reject["raw_text"] == record.decode()[:4_000]
    assert reject["line"] == 2
    [raw] = [r for r in result.raw if r["line"] == 2]
    assert raw["text"] == record  # the raw layer keeps it whole, as UTF-8 bytes


def test_truncated_array_file(tmp_path, ingest_dataset):
    cut = b'{"id": "t3", "content": [{"class_": "text_observation", "con'
    data = b"[\n" + good("a1") + b",\n" + good("a2") + b",\n" + cut
    landing, path = land(tmp_path, "cut.json", data)
    result = ingest_dataset(ADAPTER, "cut", [path], landing)
    assert [e["episode_id"] for e in result.rows("episodes")] == ["cut/a1", "cut/a2"]
    [reject] = result.rows("rejects")
    assert (reject["reason"], reject["stage"], reject["line"]) == ("truncated", "read", 4)
    assert (reject["file"], reject["record_index"], reject["raw_text"]) == (
        "adp/cut.json",
        2,
        cut.decode(),
    )


def test_rejects_fit_the_contract(mixed, tmp_lake, write_std_tables):
    write_std_tables(tmp_lake, "adp.mixed", mixed.tables)


# --- duplicate ids --------------------------------------------------------------------------

DUP_A = good("dup", "first text")
DUP_B = good("dup", "other text")


def run_records(tmp_path: Path, ingest_dataset, records: list[bytes], name: str = "dups"):
    landing, path = land(tmp_path / name, f"{name}.jsonl", b"\n".join(records) + b"\n")
    return ingest_dataset(ADAPTER, name, [path], landing)


def test_same_id_different_content_keeps_both(tmp_path, ingest_dataset):
    result = run_records(tmp_path, ingest_dataset, [DUP_A, DUP_B])
    episodes = result.rows("episodes")
    assert result.rows("rejects") == []
    assert len(episodes) == 2
    for episode in episodes:
        assert episode["episode_id"] == f"dups/dup@{episode['content_sha'][:12]}"
        assert episode["source_id"] == "dup"
    assert episodes[0]["content_sha"] != episodes[1]["content_sha"]
    events = result.rows("events")
    assert {e["episode_id"] for e in events} == {e["episode_id"] for e in episodes}


def test_duplicate_ids_do_not_depend_on_record_order(tmp_path, ingest_dataset):
    """Ids depend on content only; identical copies are numbered `-2`, `-3`."""
    sha_a = run_records(tmp_path, ingest_dataset, [DUP_A], "a").rows("episodes")[0]["content_sha"]
    sha_b = run_records(tmp_path, ingest_dataset, [DUP_B], "b").rows("episodes")[0]["content_sha"]
    expected = {f"dup@{sha_a[:12]}", f"dup@{sha_a[:12]}-2", f"dup@{sha_b[:12]}", "solo"}
    for number, order in enumerate(itertools.permutations([DUP_A, DUP_B, DUP_A, good("solo")])):
        result = run_records(tmp_path, ingest_dataset, list(order), f"dups{number}")
        assert result.rows("rejects") == []
        ids = {e["episode_id"] for e in result.rows("episodes")}
        assert ids == {f"dups{number}/{key}" for key in expected}, order


def test_identical_copies_share_content_sha(tmp_path, ingest_dataset):
    result = run_records(tmp_path, ingest_dataset, [DUP_A, DUP_A, DUP_A])
    episodes = result.rows("episodes")
    assert len({e["content_sha"] for e in episodes}) == 1
    base = f"dups/dup@{episodes[0]['content_sha'][:12]}"
    assert [e["episode_id"] for e in episodes] == [base, f"{base}-2", f"{base}-3"]


def test_content_sha_ignores_episode_id_and_source(tmp_path, ingest_dataset):
    one = run_records(tmp_path, ingest_dataset, [good("x", "same")], "one")
    two = run_records(tmp_path, ingest_dataset, [good("y", "same")], "two")
    other = run_records(tmp_path, ingest_dataset, [good("x", "changed")], "three")
    sha = one.rows("episodes")[0]["content_sha"]
    assert two.rows("episodes")[0]["content_sha"] == sha
    assert other.rows("episodes")[0]["content_sha"] != sha


def test_repeated_id_without_ambiguity_hint_is_rejected_not_lost(tmp_path):
    """Called without `repeated_ids`, a second record with an id becomes a duplicate_id reject."""
    landing, path = land(tmp_path, "plain.jsonl", DUP_A + b"\n" + DUP_B + b"\n")
    raw = list(ingest.raw_records(ADAPTER, "plain", [path], landing))
    rows = list(standardized_rows.standardize(ADAPTER, "plain", raw))
    episodes = [r.values for r in rows if r.table == "episodes"]
    rejects = [r.values for r in rows if r.table == "rejects"]
    assert [e["episode_id"] for e in episodes] == ["plain/dup"]
    assert [(r["reason"], r["line"]) for r in rejects] == [("duplicate_id", 2)]


def test_repeated_ids():
    ids: list[Any] = [None, "a", "b", "a", None, "c", "c", "c", "d"]
    assert standardized_rows.repeated_ids(ids) == {"a", "c"}
    assert standardized_rows.repeated_ids([]) == set()
    assert standardized_rows.repeated_ids([None, None]) == set()


# --- discovery and fingerprints ---------------------------------------------------------------


def touch(path: Path, data: bytes = b"[]") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_discover_files_and_folders_of_shards(tmp_path):
    landing = tmp_path / "landing"
    one = touch(landing / "adp" / "one.json")
    two = touch(landing / "adp" / "two-2_b.jsonl")
    part1 = touch(landing / "adp" / "sharded" / "part-1.jsonl")
    part0 = touch(landing / "adp" / "sharded" / "part-0.json")
    part2 = touch(landing / "adp" / "sharded" / "more" / "part-2.jsonl")
    touch(landing / "adp" / "sharded" / "README.txt")
    touch(landing / "adp" / "sharded" / ".cache" / "part-3.json")  # the Hub client's
    touch(landing / "adp" / "notes.txt")
    touch(landing / "adp" / ".hidden.json")
    (landing / "adp" / "empty_folder").mkdir()
    train = touch(landing / "mind2web" / "train_demo.json")
    found = ingest.discover(landing, adapters())
    assert found == {
        "adp.one": [one],
        "adp.sharded~more~part-2": [part2],
        "adp.sharded~part-0": [part0],
        "adp.sharded~part-1": [part1],
        "adp.two-2_b": [two],
        "mind2web.train_demo": [train],
    }


def test_discover_without_landing_folders(tmp_path):
    assert ingest.discover(tmp_path / "nowhere", adapters()) == {}


@pytest.mark.parametrize(
    "names",
    [["bad name.json"], ["a.b.json"], ["-lead.jsonl"], ["twice.json", "twice.jsonl"]],
)
def test_discover_rejects_bad_names(tmp_path, names):
    for name in names:
        touch(tmp_path / "landing" / "adp" / name)
    with pytest.raises(ValueError):
        ingest.discover(tmp_path / "landing", adapters())


def test_dataset_files(tmp_path):
    landing = tmp_path / "landing"
    one = touch(landing / "adp" / "one.json")
    assert ingest.dataset_files(landing, ADAPTER, "one") == [one]
    with pytest.raises(FileNotFoundError):
        ingest.dataset_files(landing, ADAPTER, "missing")


def test_collection_paused_restores_the_collector():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collection_paused():
        raise RuntimeError("a failing step")
    assert gc.isenabled()


def test_a_record_orjson_refuses_but_json_allows_is_a_reject_or_a_row_not_a_crash(
    tmp_path, ingest_dataset
):
    """A lone surrogate escape (`\\ud800`) is JSON to the standard library, not to orjson."""
    event = b'{"class_": "text_observation", "content": "\\ud800", "source": "user"}'
    odd = b'[{"id": "\xc3\xa9-1", "content": [' + event + b"]},\n"
    landing, path = land(tmp_path, "odd.json", odd + good("a2") + b"]")
    result = ingest_dataset(ADAPTER, "odd", [path], landing)
    episodes = [e["episode_id"] for e in result.rows("episodes")]
    rejects = [(r["line"], r["reason"]) for r in result.rows("rejects")]
    assert "odd/a2" in episodes
    assert len(episodes) + len(rejects) == 2, (episodes, rejects)


def test_a_jsonl_file_is_read_by_lines_even_when_its_first_record_is_an_array(
    tmp_path, ingest_dataset
):
    """A `.jsonl` file whose first line held `[]` was read as an empty JSON array: no records."""
    landing, path = land(tmp_path, "lines.jsonl", b"[]\n" + good("a1") + b"\n")
    result = ingest_dataset(ADAPTER, "lines", [path], landing)
    assert len(result.raw) == 2
    assert [e["episode_id"] for e in result.rows("episodes")] == ["lines/a1"]
    assert [(r["line"], r["reason"]) for r in result.rows("rejects")] == [(1, "wrong_type")]
