"""Parquet and CSV landing files read as records: values, locations, and every read error."""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets.sources.base import read_records
from bigaction_assets.sources.csv_rows import iter_csv_records
from bigaction_assets.sources.landing import shard_split
from bigaction_assets.sources.parquet_rows import BATCH_ROWS, iter_parquet_records

PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image-"


def by_query(value):
    return value.get("query") if isinstance(value, dict) else None


def write_parquet(path: Path, table: pa.Table, **options) -> Path:
    pq.write_table(table, path, **options)
    return path


def test_parquet_rows_are_json_objects_with_images_as_references(tmp_path):
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "query": ["first", "second", None],
            "score": [1.5, float("nan"), 2.0],
            "shot": pa.array(
                [{"bytes": PNG, "path": "a.png"}, {"bytes": None, "path": "b.png"}, None],
                type=image,
            ),
            "tags": [["x", "y"], [], None],
        }
    )
    path = write_parquet(tmp_path / "test-00000-of-00001.parquet", table)
    records = list(iter_parquet_records(path, by_query))

    assert [r.error for r in records] == [None, None, None]
    assert [(r.line, r.record_index) for r in records] == [(1, 0), (2, 1), (3, 2)]
    first = orjson.loads(records[0].data)
    assert first == records[0].value, "the parsed value is what the text says"
    assert first["shot"] == {
        "bytes": {"sha256": hashlib.sha256(PNG).hexdigest(), "size": len(PNG)},
        "path": "a.png",
    }
    assert orjson.loads(records[1].data)["score"] is None  # NaN is not JSON
    assert orjson.loads(records[1].data)["shot"] == {"bytes": None, "path": "b.png"}
    assert [r.record_id for r in records] == ["first", "second", None]
    assert all(r.byte_offset == records[0].byte_offset > 0 for r in records), "one row group"


def test_parquet_rows_stream_across_row_groups_in_order(tmp_path):
    rows = 3 * BATCH_ROWS + 5
    table = pa.table({"query": [f"q{i}" for i in range(rows)]})
    path = write_parquet(tmp_path / "shard.parquet", table, row_group_size=BATCH_ROWS + 1)
    records = list(iter_parquet_records(path, by_query))
    assert [r.record_id for r in records] == [f"q{i}" for i in range(rows)]
    offsets = sorted({r.byte_offset for r in records})
    assert len(offsets) == pq.ParquetFile(path).num_row_groups
    group_rows = BATCH_ROWS + 1
    assert records[group_rows].byte_offset > records[group_rows - 1].byte_offset


@pytest.mark.parametrize(
    "content",
    [b"", b"PAR1", b"not parquet at all\n", b"PAR1" + b"\x00" * 64 + b"PAR1"],
    ids=["empty", "magic-only", "text", "no-footer"],
)
def test_a_file_parquet_cannot_open_is_one_unreadable_record(tmp_path, content):
    path = tmp_path / "broken.parquet"
    path.write_bytes(content)
    [record] = list(iter_parquet_records(path, by_query))
    assert record.error == "unreadable_file"
    assert "Parquet" in record.error_detail


def test_a_truncated_parquet_file_is_unreadable(tmp_path):
    path = write_parquet(tmp_path / "x.parquet", pa.table({"query": ["a", "b"]}))
    path.write_bytes(path.read_bytes()[:-20])
    assert [r.error for r in iter_parquet_records(path, by_query)] == ["unreadable_file"]


def csv_bytes(rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue().encode()


def test_csv_rows_with_multiline_fields_keep_their_lines_and_offsets(tmp_path):
    data = csv_bytes(
        [
            ["query", "html", "xpath"],
            ["Search", "<html>\n<body>a, b</body>\n</html>", "//input"],
            ["Go", '<a title="x">Go</a>', "/html/body/a"],
        ]
    )
    path = tmp_path / "the-wave-250.csv"
    path.write_bytes(b"\xef\xbb\xbf" + data)
    records = list(iter_csv_records(path, by_query))

    assert [r.error for r in records] == [None, None]
    assert [r.line for r in records] == [2, 5]
    assert records[0].value == {
        "query": "Search",
        "html": "<html>\n<body>a, b</body>\n</html>",
        "xpath": "//input",
    }
    assert orjson.loads(records[1].data) == records[1].value
    raw = path.read_bytes()
    assert raw[records[1].byte_offset :].startswith(b"Go,")
    assert [r.record_id for r in records] == ["Search", "Go"]


def test_csv_read_errors_are_records_and_reading_goes_on(tmp_path):
    lines = [
        b"query,html,xpath\n",
        b"ok,<p>1</p>,//p\n",
        b"short,<p>2</p>\n",
        b"bad \xff byte,<p>3</p>,//p\n",
        b'quote,"<p>"x,//p\n',
        b"\n",
        b"last,<p>5</p>,//p\n",
        b'cut,"<p>never closed\n',
    ]
    path = tmp_path / "mixed.csv"
    path.write_bytes(b"".join(lines))
    records = list(iter_csv_records(path, by_query))
    assert [(r.line, r.error) for r in records] == [
        (2, None),
        (3, "malformed_csv"),
        (4, "invalid_utf8"),
        (5, "malformed_csv"),
        (7, None),
        (8, "truncated"),
    ]
    assert records[1].error_detail == "the row has 2 fields, the header 3"
    assert records[2].data == b"bad \\xff byte,<p>3</p>,//p"
    assert [r.record_index for r in records] == list(range(6))


@pytest.mark.parametrize(
    ("header", "problem"),
    [(b"query,html,query\n", "more than once"), (b"query,\xfe\n", "not UTF-8")],
)
def test_a_bad_csv_header_is_one_record_for_the_file(tmp_path, header, problem):
    path = tmp_path / "h.csv"
    path.write_bytes(header + b"a,b,c\n")
    [record] = list(iter_csv_records(path, by_query))
    assert record.error == "malformed_csv" and problem in record.error_detail


def test_records_are_read_by_file_ending(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"query\nfrom csv\n")
    write_parquet(tmp_path / "a.parquet", pa.table({"query": ["from parquet"]}))
    (tmp_path / "a.jsonl").write_bytes(b'{"query": "from jsonl"}\n')
    found = {
        name: [r.record_id for r in read_records(tmp_path / name, by_query)]
        for name in ("a.csv", "a.parquet", "a.jsonl")
    }
    assert found == {
        "a.csv": ["from csv"],
        "a.parquet": ["from parquet"],
        "a.jsonl": ["from jsonl"],
    }


@pytest.mark.parametrize(
    ("file", "split"),
    [
        ("data/test-00000-of-00001.parquet", "test"),
        ("train-00003-of-00010.csv", "train"),
        ("data/train-00000-of-00001-d3a0153e30ef2646.parquet", "train"),
        ("test_website-00000-of-00002.jsonl", "test_website"),
        ("data/test.parquet", None),
        ("TheWaveMeta.csv", None),
        ("test-0000-of-0001.parquet", None),
    ],
)
def test_the_split_comes_from_the_hub_shard_name(file, split):
    assert shard_split(file) == split
