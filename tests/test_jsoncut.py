"""The orjson cutter: it ends an element exactly where the standard library would, or declines."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets.sources import jsoncut, jsonstream
from bigaction_assets.sources.jsoncut import MORE, cut_value


@pytest.mark.parametrize(
    ("buf", "end", "value"),
    [
        (b'{"a": 1},\n{"b": 2}', 8, {"a": 1}),  # one element per line
        (b'{"a": 1}  ,  \n', 8, {"a": 1}),  # spaces around the separator
        (b'{"a": 1}]\n', 8, {"a": 1}),  # the last element, the array closed on its line
        (b'{"a": 1}, {"b": 2}\n', 8, {"a": 1}),  # two on a line: orjson says where one ends
        (b'{"a": 1} , {"b": 2}', 8, {"a": 1}),  # no newline at all
        ('{"é": "ü"}, {"b": 2}'.encode(), 12, {"é": "ü"}),  # ends counted in bytes
        (b'{"a": [1,\n 2]},\n', 14, {"a": [1, 2]}),  # an element over two lines
        (b"12345, 6", 5, 12345),
        (b'"x ] } \\" ,"]', 12, 'x ] } " ,'),
    ],
)
def test_cut_ends_an_element(buf, end, value):
    assert cut_value(buf, 0, eof=True) == (end, value)


def test_a_slice_that_cuts_a_number_grows(monkeypatch):
    monkeypatch.setattr(jsoncut, "FIRST_TRY_BYTES", 2)
    monkeypatch.setattr(jsoncut, "LINE_GUESS_BYTES", 0)
    assert cut_value(b"1234567, 8", 0, eof=True) == (7, 1234567)
    assert cut_value(b"[1, 2345], 8", 0, eof=True) == (9, [1, 2345])


def test_a_slice_never_splits_a_character(monkeypatch):
    monkeypatch.setattr(jsoncut, "FIRST_TRY_BYTES", 8)
    monkeypatch.setattr(jsoncut, "LINE_GUESS_BYTES", 0)
    buf = '["ééééé"], 1'.encode()
    assert cut_value(buf, 0, eof=True) == (len('["ééééé"]'.encode()), ["ééééé"])


@pytest.mark.parametrize("buf", [b'{"a": "run', b'{"a": 1', b"123", b'{"a": 1}  '])
def test_an_element_at_the_end_of_the_bytes_asks_for_more(buf):
    assert cut_value(buf, 0, eof=False) == MORE


def test_a_number_at_the_end_of_the_file_is_whole():
    assert cut_value(b"123", 0, eof=True) == (3, 123)


@pytest.mark.parametrize(
    "buf",
    [
        b'{"a": "cut short',  # truncated file
        b'{"a": }, {"b": 1}',  # malformed
        b'{"a": NaN}\n',  # the standard library's extension, rejected later
        b'"\\ud800"\n',  # a lone surrogate: the standard library reads it, orjson does not
        b'{"a": 1e999}\n',  # infinity
        b'{"a": "\xff"}\n',  # not UTF-8
        b'{"a": 1}x\n',  # something glued to the element
        b"[" * 1100 + b"]" * 1100,  # deeper than orjson goes
    ],
)
def test_what_orjson_cannot_vouch_for_goes_to_the_slow_path(buf):
    assert cut_value(buf, 0, eof=True) is None


def test_cut_starts_anywhere():
    buf = b'[{"a": 1},\n{"b": 2}\n]'
    assert cut_value(buf, 11, eof=True) == (19, {"b": 2})


_text = st.text(st.sampled_from([*'[]{}",:\\ \n', "é", "😀", "a", "1"]), max_size=8)
_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(-1e9, 1e9) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_values, min_size=1, max_size=4),
    indent=st.sampled_from([None, 1]),
    separator=st.sampled_from([",", ",\n", " ,  ", "\n,\n"]),
    first_try=st.sampled_from([1, 5, 64 * 1024]),
)
def test_cut_agrees_with_the_standard_library(values, indent, separator, first_try):
    """Wherever the cutter answers, the standard library's scanner ends the element there."""
    body = separator.join(json.dumps(v, indent=indent, ensure_ascii=False) for v in values)
    buf = f"[{body}]\n".encode()
    with mock.patch.object(jsoncut, "FIRST_TRY_BYTES", first_try):
        pos = 1
        for value in values:
            cut = cut_value(buf, pos, eof=True)
            assert cut is not None and cut != MORE
            end, parsed = cut
            text = buf.decode("latin-1")
            _, expected_end = json.JSONDecoder().raw_decode(text, pos)
            assert end == expected_end
            assert parsed == orjson.loads(buf[pos:end]) == value
            pos = end
            while pos < len(buf) and buf[pos] in b" \n,":
                pos += 1


def test_the_reader_takes_the_fast_path_for_one_record_per_line(tmp_path: Path):
    """A clean file never reaches the standard library's scanner (that is the slow path)."""
    path = tmp_path / "tasks.json"
    path.write_bytes(
        b"[\n" + b",\n".join(orjson.dumps({"id": str(i)}) for i in range(50)) + b"\n]\n"
    )
    with mock.patch.object(jsonstream, "DECODER") as decoder:
        records = list(jsonstream.iter_json_records(path, lambda value: value["id"]))
    decoder.raw_decode.assert_not_called()
    assert [r.record_id for r in records] == [str(i) for i in range(50)]
    assert [r.line for r in records] == list(range(2, 52))
