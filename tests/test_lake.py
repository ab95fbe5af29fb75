"""The Parquet lake, its DuckDB catalog, the quality queries and the pandera contracts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pandera.errors
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import lake, lake_reader, lake_rows, lake_writer, quality
from bigaction_assets.catalog import refresh_catalog
from bigaction_assets.schemas import arrow_schema, frame
from bigaction_assets.schemas.standardized import (
    DomSnapshotSchema,
    EpisodeSchema,
    EventSchema,
    RejectSchema,
    WebCandidateSchema,
)
from bigaction_assets.sink import ValidatedSink

SHA_A = "a" * 64
SHA_B = "b" * 64
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def numbers(count: int, name: str = "x") -> pl.DataFrame:
    return pl.DataFrame({"id": list(range(count)), "name": [name] * count})


def tmp_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(".tmp")]


# --- partitions -----------------------------------------------------------------------------


def test_open_partition_writes_zstd_parquet_at_its_path(tmp_lake):
    with lake_writer.open_partition(tmp_lake, "raw", "things", "adp.one", SCHEMA) as writer:
        writer.write(numbers(3))
        writer.write(numbers(0))
        writer.write(numbers(2).to_arrow())
        assert not (tmp_lake / "raw" / "things" / "adp.one.parquet").exists()
    path = tmp_lake / "raw" / "things" / "adp.one.parquet"
    assert writer.final_path == path == lake.partition_path(tmp_lake, "raw", "things", "adp.one")
    assert writer.rows == 5
    metadata = pq.ParquetFile(path).metadata
    assert metadata.num_rows == 5
    assert metadata.row_group(0).column(0).compression == "ZSTD"
    assert pq.read_schema(path).names == ["id", "name"]
    assert tmp_files(path.parent) == []


def test_writer_reorders_and_casts_columns_to_the_schema(tmp_lake):
    with lake_writer.open_partition(tmp_lake, "raw", "things", "p", SCHEMA) as writer:
        writer.write(pl.DataFrame({"name": ["a"], "id": pl.Series([7], dtype=pl.Int32)}))
    assert lake_reader.read_partition(tmp_lake, "raw", "things", "p").to_dicts() == [
        {"id": 7, "name": "a"}
    ]


def test_rewriting_replaces_the_partition(tmp_lake):
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(5))
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(2, "new"))
    frame_ = lake_reader.read_partition(tmp_lake, "g", "t", "p")
    assert frame_.height == 2
    assert frame_["name"].to_list() == ["new", "new"]
    assert tmp_files(tmp_lake / "g" / "t") == []


def test_failed_write_keeps_the_previous_partition(tmp_lake):
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(4, "old"))
    with (
        pytest.raises(RuntimeError, match="boom"),
        lake_writer.open_partition(tmp_lake, "g", "t", "p", SCHEMA) as writer,
    ):
        writer.write(numbers(10, "new"))
        raise RuntimeError("boom")
    frame_ = lake_reader.read_partition(tmp_lake, "g", "t", "p")
    assert frame_["name"].to_list() == ["old"] * 4
    assert tmp_files(tmp_lake / "g" / "t") == []


def test_failed_first_write_leaves_nothing(tmp_lake):
    with pytest.raises(ValueError), lake_writer.open_partition(tmp_lake, "g", "t", "p", SCHEMA):
        raise ValueError("no rows for you")
    assert list((tmp_lake / "g" / "t").iterdir()) == []


KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
import pyarrow as pa
from bigaction_assets.lake_writer import PartitionWriter
writer = PartitionWriter(Path(sys.argv[1]), pa.schema([("id", pa.int64()), ("name", pa.string())]))
writer.write(pa.table({"id": [1], "name": ["half"]}))
os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_writers_temp(final: Path) -> Path:
    """The temp file of a writer of `final` killed in the middle of its write."""
    before = set(tmp_files(final.parent)) if final.parent.is_dir() else set()
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(final)], check=False)
    assert done.returncode == -signal.SIGKILL
    [left] = set(tmp_files(final.parent)) - before
    return left


def test_what_a_killed_writer_left_goes_when_its_partition_is_written_again(tmp_lake):
    final = lake.partition_path(tmp_lake, "g", "t", "p")
    left = killed_writers_temp(final)
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(1, "young"))
    assert left.exists()  # a minute old at most: it may be a writer's not yet locked
    os.utime(left, (time.time() - 120, time.time() - 120))
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(2, "again"))
    assert not left.exists() and tmp_files(final.parent) == []
    assert lake_reader.read_partition(tmp_lake, "g", "t", "p")["name"].to_list() == ["again"] * 2


def test_a_writer_at_work_keeps_its_file_from_another_writer_of_the_partition(tmp_lake):
    with lake_writer.open_partition(tmp_lake, "g", "t", "p", SCHEMA) as slow:
        slow.write(numbers(3, "slow"))
        [held] = tmp_files(tmp_lake / "g" / "t")
        os.utime(held, (time.time() - 3600, time.time() - 3600))
        lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(1, "quick"))
        assert held.exists()
    assert lake_reader.read_partition(tmp_lake, "g", "t", "p")["name"].to_list() == ["slow"] * 3
    assert tmp_files(tmp_lake / "g" / "t") == []


@pytest.mark.parametrize("partition", ["a/b", "../up", ".hidden", "/abs"])
def test_partition_keys_that_cannot_name_a_file_are_rejected(tmp_lake, partition):
    with pytest.raises(ValueError):
        lake.partition_path(tmp_lake, "g", "t", partition)
    with pytest.raises(ValueError):
        lake_writer.write_partition(tmp_lake, "g", "t", partition, numbers(1))


def test_iter_partition_batches_streams_everything(tmp_lake):
    lake_writer.write_partition(tmp_lake, "g", "t", "p", numbers(10))
    batches = list(lake_reader.iter_partition_batches(tmp_lake, "g", "t", "p", batch_rows=3))
    assert all(batch.num_rows <= 3 for batch in batches)
    assert [row["id"] for b in batches for row in b.to_pylist()] == list(range(10))


# --- catalog ---------------------------------------------------------------------------------


def test_refresh_catalog_makes_a_view_per_table(tmp_path, tmp_lake):
    catalog = tmp_path / "catalog" / "lake.duckdb"
    lake_writer.write_partition(tmp_lake, "raw", "alpha", "p1", numbers(3))
    lake_writer.write_partition(tmp_lake, "standardized", "beta", "p1", numbers(1))
    (tmp_lake / "standardized" / "empty").mkdir()
    assert refresh_catalog(tmp_lake, catalog) == ["alpha", "beta"]
    with duckdb.connect(str(catalog)) as con:
        assert con.execute("select count(*) from alpha").fetchone() == (3,)
        assert con.execute("select count(*) from beta").fetchone() == (1,)
        views = {row[0] for row in con.execute("select view_name from duckdb_views()").fetchall()}
        assert "empty" not in views
    # a new partition shows up in the view without refreshing the catalog
    lake_writer.write_partition(tmp_lake, "raw", "alpha", "p2", numbers(4))
    with duckdb.connect(str(catalog)) as con:
        assert con.execute("select count(*) from alpha").fetchone() == (7,)
    # and refreshing twice is harmless
    assert refresh_catalog(tmp_lake, catalog) == ["alpha", "beta"]


def test_refresh_catalog_on_an_empty_lake(tmp_path):
    assert refresh_catalog(tmp_path / "no-lake", tmp_path / "c.duckdb") == []


# --- quality queries --------------------------------------------------------------------------


def episode(episode_id: str, num_events: int, dataset: str = "adp.a") -> dict[str, Any]:
    return {
        "episode_id": episode_id,
        "dataset": dataset,
        "source": dataset.split(".")[1],
        "source_format": "adp",
        "source_split": None,
        "source_id": episode_id.split("/")[-1],
        "source_file": "adp/a.json",
        "source_record": 0,
        "task": None,
        "website": None,
        "domain": None,
        "subdomain": None,
        "details": "{}",
        "num_events": num_events,
        "content_sha": SHA_A,
        "schema_version": 2,
    }


def event(episode_id: str, idx: int, **values: Any) -> dict[str, Any]:
    row = dict.fromkeys(EventSchema.to_schema().columns)
    row.update(episode_id=episode_id, idx=idx, kind="message_action", actor="agent")
    row.update(values)
    return row


def reject(dataset: str) -> dict[str, Any]:
    return {
        "source": dataset.split(".")[1],
        "dataset": dataset,
        "source_format": "adp",
        "file": "adp/a.json",
        "line": 1,
        "record_index": 0,
        "stage": "read",
        "reason": "malformed_json",
        "detail": "bad",
        "raw_text": "{",
    }


def page(html_sha: str) -> dict[str, Any]:
    return {"html_sha": html_sha, "raw_html": "<html/>", "cleaned_html": None, "raw_bytes": 7}


def write(lake_root: Path, table: str, rows: list[dict[str, Any]], partition: str = "adp.a"):
    """Write rows as they are, without the contract, so that broken tables can be built."""
    lake_writer.write_partition(lake_root, "standardized", table, partition, pl.DataFrame(rows))


@pytest.fixture
def clean_lake(tmp_lake):
    write(tmp_lake, "episodes", [episode("a/1", 2), episode("a/2", 1), episode("a/3", 0)])
    write(
        tmp_lake,
        "events",
        [event("a/1", 0), event("a/1", 1, html_sha=SHA_A), event("a/2", 0)],
    )
    write(tmp_lake, "dom_snapshots", [page(SHA_A)])
    return tmp_lake


ALL_CHECKS = [
    quality.duplicate_episode_ids,
    quality.orphan_events,
    quality.noncontiguous_episodes,
    quality.unresolved_html_shas,
    quality.unknown_kinds_or_actors,
]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda f: f.__name__)
def test_quality_checks_pass_on_clean_tables(clean_lake, check):
    with duckdb.connect() as con:
        assert check(con, clean_lake) == []


def test_duplicate_episode_ids(clean_lake):
    write(clean_lake, "episodes", [episode("a/1", 2, "adp.b")], partition="adp.b")
    with duckdb.connect() as con:
        [row] = quality.duplicate_episode_ids(con, clean_lake)
    assert (row["episode_id"], row["copies"], sorted(row["datasets"])) == (
        "a/1",
        2,
        ["adp.a", "adp.b"],
    )


def test_orphan_events(clean_lake):
    write(clean_lake, "events", [event("ghost/1", 0), event("ghost/1", 1)], partition="x")
    with duckdb.connect() as con:
        assert quality.orphan_events(con, clean_lake) == [{"episode_id": "ghost/1"}]


@pytest.mark.parametrize(
    ("events", "num_events"),
    [
        ([0, 2], 2),  # a gap
        ([1, 2], 2),  # not from 0
        ([0, 0], 2),  # a repeated idx
        ([0, 1], 3),  # fewer events than num_events
        ([0, 1, 2], 2),  # more
        ([], 1),  # none at all
    ],
)
def test_noncontiguous_episodes(tmp_lake, events, num_events):
    write(tmp_lake, "episodes", [episode("a/ok", 1), episode("a/bad", num_events)])
    write(tmp_lake, "events", [event("a/ok", 0)] + [event("a/bad", idx) for idx in events])
    with duckdb.connect() as con:
        offenders = quality.noncontiguous_episodes(con, tmp_lake)
    assert [row["episode_id"] for row in offenders] == ["a/bad"]


def test_unresolved_html_shas(clean_lake):
    write(clean_lake, "events", [event("a/1", 0, html_sha=SHA_B)], partition="adp.b")
    with duckdb.connect() as con:
        assert quality.unresolved_html_shas(con, clean_lake) == [
            {"episode_id": "a/1", "idx": 0, "html_sha": SHA_B}
        ]


def test_unresolved_html_shas_without_any_pages(tmp_lake):
    write(tmp_lake, "episodes", [episode("a/1", 1)])
    write(tmp_lake, "events", [event("a/1", 0, html_sha=SHA_A)])
    with duckdb.connect() as con:
        assert len(quality.unresolved_html_shas(con, tmp_lake)) == 1


def test_unknown_kinds_or_actors(clean_lake):
    rows = [event("a/9", 0, kind="video_observation"), event("a/9", 1, actor="robot")]
    write(clean_lake, "events", rows, partition="adp.b")
    with duckdb.connect() as con:
        assert quality.unknown_kinds_or_actors(con, clean_lake) == [
            {"kind": "message_action", "actor": "robot", "events": 1},
            {"kind": "video_observation", "actor": "agent", "events": 1},
        ]


def test_reject_rates(tmp_lake):
    write(tmp_lake, "episodes", [episode(f"a/{i}", 0) for i in range(3)], partition="adp.a")
    write(tmp_lake, "episodes", [episode("c/1", 0, "adp.c")], partition="adp.c")
    write(tmp_lake, "rejects", [reject("adp.a")], partition="adp.a")
    write(tmp_lake, "rejects", [reject("adp.b"), reject("adp.b")], partition="adp.b")
    assert quality.reject_rates(tmp_lake) == [
        {"dataset": "adp.a", "kept": 3, "rejected": 1, "reject_rate": 0.25},
        {"dataset": "adp.b", "kept": 0, "rejected": 2, "reject_rate": 1.0},
        {"dataset": "adp.c", "kept": 1, "rejected": 0, "reject_rate": 0.0},
    ]


def test_reject_rates_leave_out_empty_files_and_can_take_one_dataset(tmp_lake):
    write(tmp_lake, "episodes", [episode(f"a/{i}", 0) for i in range(3)], partition="adp.a")
    write(tmp_lake, "episodes", [episode("c/1", 0, "adp.c")], partition="adp.c")
    write(tmp_lake, "rejects", [reject("adp.a")], partition="adp.a")
    write(tmp_lake, "rejects", [reject("adp.b"), reject("adp.b")], partition="adp.b")
    empty = pl.DataFrame([reject("adp.d")]).clear()  # a dataset with nothing rejected
    lake_writer.write_partition(tmp_lake, "standardized", "rejects", "adp.d", empty)
    assert quality.reject_rates(tmp_lake) == [
        {"dataset": "adp.a", "kept": 3, "rejected": 1, "reject_rate": 0.25},
        {"dataset": "adp.b", "kept": 0, "rejected": 2, "reject_rate": 1.0},
        {"dataset": "adp.c", "kept": 1, "rejected": 0, "reject_rate": 0.0},
    ], "the empty file of adp.d rates nothing"
    assert quality.reject_rates(tmp_lake, ["adp.b"]) == [
        {"dataset": "adp.b", "kept": 0, "rejected": 2, "reject_rate": 1.0}
    ]


def test_reject_rates_without_rejects(clean_lake):
    assert quality.reject_rates(clean_lake) == [
        {"dataset": "adp.a", "kept": 3, "rejected": 0, "reject_rate": 0.0}
    ]


# --- pandera contracts -------------------------------------------------------------------------


def test_frame_builds_the_contract_shape():
    built = frame(EpisodeSchema, [episode("a/1", 2)])
    assert built.columns == list(EpisodeSchema.to_schema().columns)
    assert built.schema["num_events"] == pl.Int32


def test_frame_rejects_an_extra_column():
    with pytest.raises(pandera.errors.SchemaError, match="surprise"):
        frame(EpisodeSchema, [{**episode("a/1", 2), "surprise": "x"}])


def test_frame_rejects_an_extra_column_in_a_later_row():
    rows = [episode(f"a/{i}", 0) for i in range(200)] + [{**episode("a/x", 0), "late": 1}]
    with pytest.raises(pandera.errors.SchemaError, match="late"):
        frame(EpisodeSchema, rows)


def test_frame_rejects_a_duplicate_episode_id():
    with pytest.raises(pandera.errors.SchemaError):
        frame(EpisodeSchema, [episode("a/1", 2), episode("a/1", 2)])


@pytest.mark.parametrize(
    "values",
    [
        {"kind": "video_observation"},
        {"actor": "robot"},
        {"html_sha": "not-hex"},
        {"html_sha": SHA_A.upper()},
        {"idx": -1},
        {"viewport_width": -5},
        {"kind": None},
    ],
)
def test_event_contract_rejects(values):
    assert frame(EventSchema, [event("a/1", 0, html_sha=SHA_A)]).height == 1
    row = event("a/1", 0)
    row.update(values)
    with pytest.raises(pandera.errors.SchemaError):
        frame(EventSchema, [row])


def test_other_contracts_reject_bad_values():
    with pytest.raises(pandera.errors.SchemaError):
        frame(DomSnapshotSchema, [page("f" * 63)])
    with pytest.raises(pandera.errors.SchemaError):
        frame(EpisodeSchema, [{**episode("a/1", 0), "content_sha": "xyz"}])
    with pytest.raises(pandera.errors.SchemaError):
        frame(RejectSchema, [{**reject("adp.a"), "stage": "later"}])


def test_validated_sink_flushes_validated_batches(tmp_lake, monkeypatch):
    monkeypatch.setattr("bigaction_assets.sink.MAX_ROWS", 2)
    schema = arrow_schema(RejectSchema)
    with lake_writer.open_partition(tmp_lake, "standardized", "rejects", "adp.a", schema) as writer:
        sink = ValidatedSink(RejectSchema, writer)
        for _ in range(5):
            sink.add(reject("adp.a"))
        assert writer.rows == 4  # two full batches went out, one row waits
        sink.flush()
    assert (sink.total, writer.rows) == (5, 5)
    assert lake_reader.read_partition(tmp_lake, "standardized", "rejects", "adp.a").height == 5


def test_validated_sink_refuses_a_bad_batch(tmp_lake):
    schema = arrow_schema(RejectSchema)
    path = lake.partition_path(tmp_lake, "standardized", "rejects", "adp.a")
    with (
        pytest.raises(pandera.errors.SchemaError),
        lake_writer.open_partition(tmp_lake, "standardized", "rejects", "adp.a", schema) as writer,
    ):
        sink = ValidatedSink(RejectSchema, writer)
        sink.add({**reject("adp.a"), "stage": "nowhere"})
        sink.flush()
    assert not path.exists()


@pytest.mark.parametrize(
    "model",
    [EpisodeSchema, EventSchema, DomSnapshotSchema, WebCandidateSchema, RejectSchema],
    ids=lambda m: m.__name__,
)
def test_contracts_are_strict_and_coerce(model):
    schema = model.to_schema()
    assert (schema.strict, schema.coerce) == (True, True)


def test_rows_and_sample_reads_long_columns_of_the_sample_only(tmp_path):
    schema = pa.schema([("id", pa.int64()), ("text", pa.string())])
    with lake_writer.open_partition(tmp_path, "g", "t", "p", schema) as writer:
        for start in (0, 3):  # two row groups: positions run on across them
            ids = list(range(start, start + 3))
            writer.write(pa.table({"id": ids, "text": [f"text {i}" for i in ids]}, schema=schema))
    assert pq.ParquetFile(lake.partition_path(tmp_path, "g", "t", "p")).num_row_groups == 2
    seen = []

    def every_other(position: int, row: dict) -> bool:
        seen.append((position, row["id"]))
        return position % 2 == 0

    rows = list(
        lake_reader.iter_rows_and_sample(tmp_path, "g", "t", ["id"], ["text"], every_other, "p")
    )
    assert seen == [(i, i) for i in range(6)]
    assert rows == [({"id": i}, {"text": f"text {i}"} if i % 2 == 0 else None) for i in range(6)]


def test_rows_and_sample_gives_the_samples_texts_as_their_utf8_when_asked(tmp_path):
    schema = pa.schema([("id", pa.int64()), ("text", pa.large_string()), ("n", pa.int64())])
    texts = ["plain", "caf\u00e9 \U0001f600", None]
    with lake_writer.open_partition(tmp_path, "g", "t", "p", schema) as writer:
        writer.write(pa.table({"id": [0, 1, 2], "text": texts, "n": [7, 8, 9]}, schema=schema))

    def rows(as_utf8: bool) -> list:
        read = lake_reader.iter_rows_and_sample
        return [
            heavy
            for _, heavy in read(
                tmp_path, "g", "t", ["id"], ["text", "n"], lambda *_: True, "p", as_utf8
            )
        ]

    assert rows(False) == [{"text": t, "n": n} for t, n in zip(texts, [7, 8, 9], strict=True)]
    as_bytes = [{"text": t and t.encode(), "n": n} for t, n in zip(texts, [7, 8, 9], strict=True)]
    assert rows(True) == as_bytes  # only text columns change, to the bytes they hold


def test_validated_sink_flushes_at_its_own_text_bound(tmp_lake):
    """A sink told to hold less text flushes as soon as its rows carry that much."""
    schema = arrow_schema(RejectSchema)
    with lake_writer.open_partition(tmp_lake, "standardized", "rejects", "adp.a", schema) as writer:
        sink = ValidatedSink(RejectSchema, writer, max_chars=10_000)
        sink.add({**reject("adp.a"), "raw_text": "x" * 6_000})
        assert writer.rows == 0
        sink.add({**reject("adp.a"), "raw_text": "y" * 6_000})
        assert writer.rows == 2


# every check but episode-id uniqueness, which is table-wide by nature
PARTITION_CHECKS = [check for check in ALL_CHECKS if check is not quality.duplicate_episode_ids]


@pytest.mark.parametrize("check", PARTITION_CHECKS, ids=lambda f: f.__name__)
def test_a_check_of_one_partition_reads_that_partition_alone(clean_lake, check):
    """A broken partition fails its own check, and leaves the clean one's passing."""
    write(clean_lake, "episodes", [episode("b/1", 1, "adp.b")], partition="adp.b")
    broken = [event("ghost/1", 0, html_sha=SHA_B), event("b/1", 3, html_sha=SHA_B)]
    write(clean_lake, "events", [{**e, "kind": "teleport"} for e in broken], partition="adp.b")
    write(clean_lake, "dom_snapshots", [page(SHA_A)], partition="adp.b")
    with duckdb.connect() as con:
        assert check(con, clean_lake, partition="adp.a") == []
        assert check(con, clean_lake, partition="adp.b") != []
        assert check(con, clean_lake) != [], "the whole table holds the broken partition"


def test_a_partition_resolves_its_pages_in_its_own_snapshots(clean_lake):
    """A dataset stores every page its events show: one found only in another dataset's
    snapshots is missing from this one's."""
    write(clean_lake, "episodes", [episode("b/1", 1, "adp.b")], partition="adp.b")
    write(clean_lake, "events", [event("b/1", 0, html_sha=SHA_A)], partition="adp.b")
    with duckdb.connect() as con:
        assert quality.unresolved_html_shas(con, clean_lake) == []
        assert quality.unresolved_html_shas(con, clean_lake, partition="adp.b") == [
            {"episode_id": "b/1", "idx": 0, "html_sha": SHA_A}
        ]


def test_table_rows_reads_each_version_of_a_footer_once(tmp_lake, monkeypatch):
    """The totals every materialization reports: a partition's footer is read again only
    when its file changed, so N partitions built one by one read N footers, not N^2."""
    read: list[str] = []
    footer_rows = lake_rows.footer_rows
    monkeypatch.setattr(
        lake_rows, "footer_rows", lambda root, f: read.append(str(f)) or footer_rows(root, f)
    )
    for number, partition in enumerate(["adp.a", "adp.b", "adp.c"], start=1):
        write(
            tmp_lake, "episodes", [episode(f"{partition}/{n}", 0) for n in range(number)], partition
        )
        assert lake_rows.table_rows(tmp_lake, "standardized", "episodes") == (
            number * (number + 1) // 2,
            number,
        )
    assert [Path(f).stem for f in read] == ["adp.a", "adp.b", "adp.c"]
    write(tmp_lake, "episodes", [episode("b/only", 0)], partition="adp.b")  # rewritten: read again
    assert lake_rows.table_rows(tmp_lake, "standardized", "episodes") == (1 + 1 + 3, 3)
    assert [Path(f).stem for f in read][3:] == ["adp.b"]
