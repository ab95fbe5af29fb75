"""The streaming reader: exact record text and location, and read errors as records."""

from __future__ import annotations

import io
import json
from pathlib import Path
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets.sources import jsonstream
from bigaction_assets.sources.jsonstream import iter_json_records, iter_jsonl_records
from bigaction_assets.sources.jsonwindow import ByteWindow
from bigaction_assets.sources.raw_text import RawText

CHUNK_SIZES = [1, 3, 7, 64, jsonstream.CHUNK_BYTES]
BOM = b"\xef\xbb\xbf"


def write(tmp_path: Path, data: bytes, name: str = "data.json") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def read(path: Path) -> list[RawText]:
    return list(iter_json_records(path))


def assert_located(data: bytes, records: list[RawText]) -> None:
    """Each readable record's text is in the file at its byte offset, on its line."""
    for index, record in enumerate(records):
        assert record.record_index == index
        raw = record.text.encode()
        assert data[record.byte_offset : record.byte_offset + len(raw)] == raw
        assert record.line == data[: record.byte_offset].count(b"\n") + 1


ARRAY = (
    b"[\n"
    b'  {"id": "a", "text": "brackets ] and [ and } and { inside"},\n'
    b'  {"id": "b", "text": "escaped \\" quote and \\\\ backslash ]"},\n'
    b'  {"id": "c",\n   "nested": {"list": [1, [2, {"x": "}"}]], "e": {}}}\n'
    b"]\n"
)
ARRAY_TEXTS = [
    '{"id": "a", "text": "brackets ] and [ and } and { inside"}',
    '{"id": "b", "text": "escaped \\" quote and \\\\ backslash ]"}',
    '{"id": "c",\n   "nested": {"list": [1, [2, {"x": "}"}]], "e": {}}}',
]


def test_array_records_exact_text_and_location(tmp_path):
    records = read(write(tmp_path, ARRAY))
    assert [r.text for r in records] == ARRAY_TEXTS
    assert [r.line for r in records] == [2, 3, 4]
    assert [r.byte_offset for r in records] == [ARRAY.index(t.encode()) for t in ARRAY_TEXTS]
    assert all(r.error is None for r in records)
    assert orjson.loads(records[1].text)["text"] == 'escaped " quote and \\ backslash ]'
    assert_located(ARRAY, records)


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_array_chunk_boundaries_do_not_change_output(tmp_path, monkeypatch, chunk):
    path = write(tmp_path, ARRAY)
    expected = read(path)
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    assert read(path) == expected


def test_array_every_chunk_size_gives_the_same_records(tmp_path, monkeypatch):
    """Cuts at every possible place: inside strings, escapes, brackets and whitespace."""
    path = write(tmp_path, ARRAY)
    expected = read(path)
    for chunk in range(1, len(ARRAY) + 2):
        monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
        assert read(path) == expected, f"CHUNK_BYTES={chunk}"


JSONL = (
    b'{"id": "a", "text": "] [ } {"}\n'
    b"\n"
    b"   \n"
    b'{"id": "b", "text": "\\"quoted\\" \\\\"}\r\n'
    b"\n"
    b'{"id": "c", "n": [1, {"d": 2}]}\n'
)


def test_jsonl_records_skip_blank_lines(tmp_path):
    records = list(iter_jsonl_records(write(tmp_path, JSONL, "data.jsonl")))
    assert [r.text for r in records] == [
        '{"id": "a", "text": "] [ } {"}',
        '{"id": "b", "text": "\\"quoted\\" \\\\"}',
        '{"id": "c", "n": [1, {"d": 2}]}',
    ]
    assert [r.line for r in records] == [1, 4, 6]
    assert [r.record_index for r in records] == [0, 1, 2]
    assert all(r.error is None for r in records)
    assert_located(JSONL, records)


def test_json_reader_reads_jsonl_content_too(tmp_path):
    """A `.json` file that is not an array is read as JSON lines."""
    path = write(tmp_path, JSONL, "lines.json")
    assert read(path) == list(iter_jsonl_records(path))


def test_jsonl_offset_is_first_byte_of_indented_record(tmp_path):
    data = b'{"a": 1}\n   {"b": 2}\n'
    records = list(iter_jsonl_records(write(tmp_path, data, "data.jsonl")))
    assert [r.byte_offset for r in records] == [0, 12]
    assert_located(data, records)


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_record_spanning_many_chunks(tmp_path, monkeypatch, chunk):
    long_text = 'x"]}{[' * 200
    record = orjson.dumps({"id": "long", "text": long_text, "tail": [{"k": "v"}]})
    data = b'[{"id": "first"},\n' + record + b',\n{"id": "last"}]'
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    records = read(write(tmp_path, data))
    assert [r.text.encode() for r in records] == [b'{"id": "first"}', record, b'{"id": "last"}']
    assert [r.line for r in records] == [1, 2, 3]
    assert orjson.loads(records[1].text)["text"] == long_text
    assert_located(data, records)


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_garbage_between_array_records(tmp_path, monkeypatch, chunk):
    data = b'[{"id": 1},\n  oops not json ,\n{"id": 2}, }, {"id": 3}]'
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    records = read(write(tmp_path, data))
    assert [(r.text, r.error) for r in records] == [
        ('{"id": 1}', None),
        ("oops not json", "malformed_json"),
        ('{"id": 2}', None),
        ("}", "malformed_json"),
        ('{"id": 3}', None),
    ]
    assert records[1].line == 2
    assert records[1].error_detail
    assert_located(data, records)


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_text_after_the_array_is_read_and_refused(tmp_path, monkeypatch, chunk):
    """What follows the closing bracket (JSON lines, a second array, a stray bracket) used to
    be dropped without a word; now each piece is a record of its own, marked malformed."""
    data = b'[{"id": 1}]\n{"id": 2}\n]\n[{"id": 3}]\n'
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    records = read(write(tmp_path, data))
    assert [(r.text, r.error) for r in records] == [
        ('{"id": 1}', None),
        ('{"id": 2}', "malformed_json"),
        ("]", "malformed_json"),
        ('[{"id": 3}]', "malformed_json"),
    ]
    assert all("closing bracket" in r.error_detail for r in records[1:])
    assert_located(data, records)


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_invalid_utf8_in_array_record(tmp_path, monkeypatch, chunk):
    data = b'[{"id": "ok"}, {"id": "bad \xff byte"}, {"id": "\xc3\xa9t\xc3\xa9"}]'
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    records = read(write(tmp_path, data))
    assert [r.error for r in records] == [None, "invalid_utf8", None]
    assert records[1].text == '{"id": "bad \\xff byte"}'
    assert "not UTF-8" in records[1].error_detail
    assert orjson.loads(records[2].text) == {"id": "été"}


def test_invalid_utf8_in_jsonl_record(tmp_path):
    data = b'{"id": "ok"}\n{"id": "bad \xfe"}\n{"id": "ok2"}\n'
    records = list(iter_jsonl_records(write(tmp_path, data, "data.jsonl")))
    assert [(r.line, r.error) for r in records] == [(1, None), (2, "invalid_utf8"), (3, None)]
    assert "\\xfe" in records[1].text


@pytest.mark.parametrize(
    "cut",
    [
        b'{"id": "cut", "content": [{"class_": "text_obs',  # inside a string
        b'{"id": "cut", "content": [{"class_": "x"}, ',  # between values
        b'{"id": "cut", "content": [1, 2',  # inside a number
    ],
)
def test_truncated_array(tmp_path, monkeypatch, cut):
    data = b'[\n{"id": "a"},\n{"id": "b"},\n' + cut
    path = write(tmp_path, data)
    for chunk in [*range(1, len(data) + 2), jsonstream.CHUNK_BYTES]:
        monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
        records = read(path)
        assert [r.error for r in records] == [None, None, "truncated"], f"CHUNK_BYTES={chunk}"
        last = records[-1]
        # whitespace after the cut is not part of the record; everything before it is
        assert last.text.rstrip() == cut.decode().rstrip(), f"CHUNK_BYTES={chunk}"
        assert (last.line, last.record_index, last.byte_offset) == (4, 2, data.index(cut))


def test_truncated_last_jsonl_line(tmp_path):
    data = b'{"id": "a"}\n{"id": "b", "text": "cut he'
    records = list(iter_jsonl_records(write(tmp_path, data, "data.jsonl")))
    assert [r.error for r in records] == [None, "truncated"]
    assert records[1].text == '{"id": "b", "text": "cut he'
    assert records[1].line == 2


def test_last_jsonl_line_without_newline_is_not_truncated(tmp_path):
    data = b'{"id": "a"}\n{"id": "b"}'
    records = list(iter_jsonl_records(write(tmp_path, data, "data.jsonl")))
    assert [r.error for r in records] == [None, None]


@pytest.mark.parametrize("chunk", CHUNK_SIZES)
def test_bom_array(tmp_path, monkeypatch, chunk):
    data = BOM + b' [{"id": 1},\n{"id": 2}]'
    monkeypatch.setattr(jsonstream, "CHUNK_BYTES", chunk)
    records = read(write(tmp_path, data))
    assert [r.text for r in records] == ['{"id": 1}', '{"id": 2}']
    assert [(r.line, r.byte_offset) for r in records] == [(1, 5), (2, 16)]
    assert_located(data, records)


def test_bom_jsonl(tmp_path):
    data = BOM + b'{"id": 1}\n{"id": 2}\n'
    for path in (write(tmp_path, data, "data.jsonl"), write(tmp_path, data, "data.json")):
        records = read(path)
        assert [r.text for r in records] == ['{"id": 1}', '{"id": 2}']
        assert all(r.error is None for r in records)
        assert_located(data, records)


@pytest.mark.parametrize("data", [b"[]", b"  [ \n ]\n", BOM + b"[]", b"", b"\n\n"])
def test_empty_files_have_no_records(tmp_path, data):
    assert read(write(tmp_path, data)) == []


# --- property: whatever the whitespace and the chunk size, the records come back ----------

_special = st.sampled_from([*'[]{}"\\,:', "\n", "\t", "é", "€", "😀", "\u2028"])
_chars = st.one_of(_special, st.characters(exclude_categories=("Cs",)))
_text = st.text(_chars, max_size=12)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_records = st.lists(st.dictionaries(_text, _values, max_size=5), max_size=6)
_space = st.text(st.sampled_from(" \t\r\n"), max_size=3)


@settings(max_examples=60, deadline=None)
@given(records=_records, data=st.data())
def test_array_round_trip_property(tmp_path_factory, records, data):
    parts = [data.draw(_space), "["]
    for position, record in enumerate(records):
        if position:
            parts += [data.draw(_space), ","]
        indent = data.draw(st.sampled_from([None, 0, 2]))
        ensure_ascii = data.draw(st.booleans())
        parts += [data.draw(_space), json.dumps(record, indent=indent, ensure_ascii=ensure_ascii)]
    parts += [data.draw(_space), "]", data.draw(_space)]
    path = tmp_path_factory.mktemp("prop") / "records.json"
    path.write_text("".join(parts), encoding="utf-8")
    for chunk in (1, 3, 7, 4096):
        with mock.patch.object(jsonstream, "CHUNK_BYTES", chunk):
            read_back = read(path)
        assert [r.error for r in read_back] == [None] * len(records)
        assert [orjson.loads(r.text) for r in read_back] == records


def test_a_non_ascii_id_in_a_record_only_the_exact_scanner_accepts(tmp_path):
    """A lone surrogate escape is JSON the standard library reads and orjson refuses; the id of
    such a record, read again as UTF-8, must not crash the reader."""
    path = tmp_path / "surrogate.json"
    path.write_bytes('[{"id": "é-1", "x": "\\ud800"}, {"id": "ok", "x": 1}]'.encode())
    records = list(iter_json_records(path, lambda value: value.get("id")))
    assert [r.record_id for r in records] == ["é-1", "ok"]
    assert [r.error for r in records] == [None, None]


def test_the_window_reads_the_whole_file_into_one_buffer_that_it_keeps():
    content = bytes(range(256)) * 40  # 10,240 bytes, no two neighbours alike
    window = ByteWindow(io.BytesIO(content), chunk_bytes=1_000)
    buffer = window.data
    read_to = 0
    while window.more(keep_from=max(0, len(window.data) - 300)):
        read_to = window.dropped + len(window.data)
        assert bytes(window.data) == content[window.dropped : read_to]
        assert window.take(10, 20) == content[window.dropped + 10 : window.dropped + 20]
        assert len(window.data) <= 1_300
    assert window.data is buffer  # one buffer throughout: no chunk joined into a new one
    assert read_to == len(content)
    assert window.eof and window.dropped + len(window.data) == len(content)


def test_a_call_at_the_end_of_the_file_still_drops_what_it_was_asked_to():
    window = ByteWindow(io.BytesIO(b"[1, 2, 3]"), chunk_bytes=64)
    assert window.more(0)
    assert not window.more(4)  # nothing more to read: the window moves on all the same
    assert (bytes(window.data), window.dropped, window.eof) == (b"2, 3]", 4, True)
