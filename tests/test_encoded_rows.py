"""Pages reach Arrow as the UTF-8 their key was hashed from (`EncodedRow`), and the table is the
one the plain rows give: the same values, the same refusals."""

from __future__ import annotations

import hashlib
import pickle

import orjson
import pandera.errors
import pyarrow as pa
import pytest

from bigaction_assets.arrow_arrays import binary_array, text_array_from_utf8
from bigaction_assets.encoded_row import EncodedRow
from bigaction_assets.hashing import page_snapshot, pages_for_cutting
from bigaction_assets.schemas import validated_table
from bigaction_assets.schemas.standardized import DomSnapshotSchema

PAGES = [
    "<html><body>plain ASCII</body></html>",
    "<p>caf\u00e9 \u00b7 \u00a9 2024 \u2014 \u6771\u4eac \U0001f600</p>",  # 2, 3 and 4 bytes a char
    "",
]


def plain(row: dict) -> dict:
    return dict(row)


def test_a_snapshot_carries_the_utf8_its_key_and_size_were_taken_from() -> None:
    for page in PAGES:
        row = page_snapshot(page, "<p>cleaned</p>")
        assert isinstance(row, EncodedRow)
        assert row.utf8_of("raw_html") == page.encode("utf-8")
        assert row.carries("raw_html") and not row.carries("cleaned_html")
        assert row["html_sha"] == hashlib.sha256(page.encode("utf-8")).hexdigest()
        assert row["raw_bytes"] == len(page.encode("utf-8"))
        assert type(row["raw_html"]) is str  # every reader of the row still sees text
    cleaned_only = page_snapshot(None, "<p>caf\u00e9</p>")
    assert cleaned_only is not None
    assert cleaned_only.utf8_of("cleaned_html") == "<p>caf\u00e9</p>".encode()
    assert cleaned_only["raw_bytes"] == 0
    assert page_snapshot(None, None) is None


def test_a_page_with_a_lone_surrogate_keeps_its_key_and_carries_no_utf8() -> None:
    page = "broken \ud800 page"
    row = page_snapshot(page, None)
    assert row is not None
    expected = hashlib.sha256(page.encode("utf-8", errors="surrogatepass")).hexdigest()
    assert row["html_sha"] == expected
    assert not row.carries("raw_html") and row.utf8_of("raw_html") is None


def test_the_table_from_encoded_rows_is_the_table_from_plain_rows() -> None:
    rows = [page_snapshot(page, f"<p>{n}</p>") for n, page in enumerate(PAGES)]
    rows.append(page_snapshot(None, "<p>only cleaned \u00e9</p>"))  # raw_html null
    rows.append({**page_snapshot("<p>a plain dict row \u00b7</p>", None)})  # no utf8 at all
    encoded = validated_table(DomSnapshotSchema, rows)
    from_text = validated_table(DomSnapshotSchema, [plain(row) for row in rows])
    assert encoded.equals(from_text)
    assert encoded.schema == from_text.schema
    assert encoded.column("raw_html").to_pylist() == [row["raw_html"] for row in rows]
    assert encoded.column("cleaned_html").to_pylist() == [row["cleaned_html"] for row in rows]


def outcome(rows: list[dict]) -> tuple[str, object]:
    """The table the rows give, or the error they are refused with."""
    try:
        return "table", validated_table(DomSnapshotSchema, rows).to_pylist()
    except (pandera.errors.SchemaError, ValueError, TypeError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize(
    "value", [42, b"<p>bytes</p>", ["<p>a list</p>"], None], ids=["int", "bytes", "list", "null"]
)
def test_a_wrong_value_beside_encoded_rows_goes_the_way_it_goes_without_them(value) -> None:
    good = page_snapshot("<p>fine</p>", None)
    assert good is not None
    wrong = {**page_snapshot("<p>other \u00e9</p>", None), "raw_html": value}
    assert outcome([good, wrong]) == outcome([plain(good), wrong])
    duplicate = {**good}  # a key repeated: the contract's own refusal
    assert outcome([good, duplicate])[0] == "SchemaError"
    assert outcome([good, duplicate]) == outcome([plain(good), duplicate])


def test_a_surrogate_page_beside_encoded_rows_fails_as_it_does_without_them() -> None:
    rows = [page_snapshot("<p>fine</p>", None), page_snapshot("bad \udc80", None)]
    with pytest.raises(UnicodeEncodeError):
        validated_table(DomSnapshotSchema, [plain(row) for row in rows])
    with pytest.raises(UnicodeEncodeError):
        validated_table(DomSnapshotSchema, rows)


def test_an_encoded_row_survives_pickling_with_its_utf8() -> None:
    row = page_snapshot(PAGES[1], None)
    back = pickle.loads(pickle.dumps(row))
    assert back == row and back.utf8_of("raw_html") == PAGES[1].encode("utf-8")


@pytest.mark.parametrize("replace", ["item", "update", "setdefault after pop"])
def test_a_page_put_in_place_of_the_encoded_one_is_stored_as_itself(replace: str) -> None:
    """A page scrubbed (or otherwise replaced) after the row was made must never be stored as
    the bytes of the page it replaced."""
    row = page_snapshot("<p>call ana@example.org</p>", None)
    assert row is not None
    scrubbed = "<p>call [EMAIL]</p>"
    if replace == "item":
        row["raw_html"] = scrubbed
    elif replace == "update":
        row.update(raw_html=scrubbed)
    else:
        row.pop("raw_html")
        row.setdefault("raw_html", scrubbed)
    assert row.utf8_of("raw_html") is None
    table = validated_table(DomSnapshotSchema, [row, page_snapshot("<p>other</p>", None)])
    assert table.column("raw_html").to_pylist() == [scrubbed, "<p>other</p>"]


def test_encoded_bytes_are_taken_as_they_are() -> None:
    """The bytes, not the string, are what is stored: a row that carried other bytes than its
    text would be stored with them (so only `page_snapshot`, which encodes the text itself,
    makes such rows)."""
    row = EncodedRow(dict(page_snapshot("<p>text</p>", None) or {}), {"raw_html": b"<p>bytes</p>"})
    table = validated_table(DomSnapshotSchema, [row])
    assert table.column("raw_html").to_pylist() == ["<p>bytes</p>"]
    assert table.column("raw_html").type == pa.large_string()


def test_a_long_page_comes_with_its_json_string_once_while_the_row_holds_it() -> None:
    """The raw step cuts a page's JSON string out of its record: the snapshot hands it over
    once (then it is not held), and not for a string put in the page's place meanwhile."""
    page = '<p class="x">caf\u00e9\n</p>' * 100
    assert page_snapshot(page, None).take_literal("raw_html") is None  # no cut to come
    with pages_for_cutting():
        row = page_snapshot(page, page + "!")
        short = page_snapshot("<p>short</p>", None)
        surrogate = page_snapshot("\ud800" * 2000, None)
    # people's records (telemetry) are never staged, so never made within the pass's context
    telemetry = page_snapshot(page, None)
    assert row.take_literal("raw_html") == orjson.dumps(page)
    assert row.take_literal("raw_html") is None
    row["cleaned_html"] = "<p>scrubbed</p>" * 100
    assert row.take_literal("cleaned_html") is None
    assert short.take_literal("raw_html") is None  # too short to be cut out
    assert surrogate.take_literal("raw_html") is None  # unwritable
    assert telemetry.take_literal("raw_html") is None


@pytest.mark.parametrize("binary", [pa.large_binary(), pa.binary()])
@pytest.mark.parametrize(
    "values",
    [[], [None], [b"", b""], [b"<p>a</p>", None, b"", "caf\u00e9".encode()], [b"x" * 4096] * 70],
)
def test_an_array_built_at_its_exact_size_is_the_array_arrow_builds(binary, values) -> None:
    built = binary_array(values, binary)
    built.validate(full=True)
    expected = pa.array(values, type=binary)
    assert built.type == expected.type and built.null_count == expected.null_count
    assert built.equals(expected)
    assert built.to_pylist() == values


def test_an_array_past_32_bit_offsets_is_left_to_arrow(monkeypatch) -> None:
    import bigaction_assets.arrow_arrays as arrays

    monkeypatch.setattr(arrays, "_MAX_32_BIT_OFFSET", 8)
    built: list[list] = []
    arrow_array = pa.array
    monkeypatch.setattr(
        arrays.pa,
        "array",
        lambda values, type: built.append(values) or arrow_array(values, type),
    )
    assert binary_array([b"0123456789"], pa.binary()).to_pylist() == [b"0123456789"]
    assert built == [[b"0123456789"]]  # Arrow's builder, which refuses what it cannot hold
    assert binary_array([b"0123456789"], pa.large_binary()).to_pylist() == [b"0123456789"]
    assert len(built) == 1  # 64-bit offsets hold it


@pytest.mark.parametrize("text", [pa.large_string(), pa.string()])
def test_text_given_as_utf8_is_the_array_arrow_builds_and_refused_where_arrow_refuses(text) -> None:
    values = [b"<p>a</p>", None, b"", "caf\u00e9 \U0001f600".encode()]
    built = text_array_from_utf8(values, text)
    assert built.type == text
    assert built.equals(pa.array(values, type=text))
    for wrong in ([b"\xff"], [b"ok", b"\xc3"]):  # not UTF-8: a stray byte, a cut character
        with pytest.raises(pa.ArrowInvalid):
            pa.array(wrong, type=text)
        with pytest.raises(pa.ArrowInvalid):
            text_array_from_utf8(wrong, text)
    with pytest.raises(TypeError):
        text_array_from_utf8(["text, not bytes"], text)
