"""Pandera contracts for every lake table, and the Arrow schemas derived from them."""

from __future__ import annotations

from array import array
from functools import cache
from itertools import accumulate

import pandera.polars as pa
import polars as pl
import pyarrow as pa_arrow

from bigaction_assets.encoded_row import EncodedRow


@cache
def polars_schema(model: type[pa.DataFrameModel]) -> pl.Schema:
    """Column names and Polars types, in the model's order."""
    columns = model.to_schema().columns
    return pl.Schema({name: column.dtype.type for name, column in columns.items()})


@cache
def arrow_schema(model: type[pa.DataFrameModel]) -> pa_arrow.Schema:
    return pl.DataFrame(schema=polars_schema(model)).to_arrow().schema


def frame(model: type[pa.DataFrameModel], rows: list[dict]) -> pl.DataFrame:
    """Build a frame of the model's shape from row dicts and validate it."""
    schema = polars_schema(model)
    data = pl.DataFrame(rows, schema=schema, orient="row", strict=False)
    unknown = sorted({key for row in rows for key in row}.difference(schema))
    if unknown:  # the frame above drops keys the model lacks; let the strict contract see them
        data = data.with_columns(pl.lit(None).alias(name) for name in unknown)
    return model.validate(data)


def validated_table(model: type[pa.DataFrameModel], rows: list[dict]) -> pa_arrow.Table:
    """Row dicts as an Arrow table of the model's schema, validated against the model.

    Arrow builds columns of multi-megabyte strings about three times faster than Polars does
    from dicts, and the validated table is what gets written. It is built column by column:
    `Table.from_pylist` took ten times as long over UTF-8 bytes (the raw records' text). Rows
    whose values Arrow will not take as they are (a wrong type) go the lenient way, through
    `frame`, so the contract, not Arrow, says what is wrong.
    """
    schema = arrow_schema(model)
    try:
        columns = [_column(rows, field) for field in schema]
        table = pa_arrow.Table.from_arrays(columns, schema=schema)
    except (pa_arrow.ArrowInvalid, pa_arrow.ArrowTypeError, TypeError, OverflowError):
        try:
            return frame(model, rows).to_arrow()
        except pl.exceptions.PolarsError as exc:  # it names no column: find the value
            raise _refused_value(model, rows) from exc
    if any(len(row) > len(table.schema) for row in rows):
        return frame(model, rows).to_arrow()  # extra keys: let the strict contract name them
    return validate_arrow(model, table)


class ValueNotStorable(ValueError):
    """A row holds a value its column's type cannot hold."""


def _column(rows: list[dict], field: pa_arrow.Field) -> list | pa_arrow.Array:
    """The field's values, as a list for Arrow to convert, or as an Arrow array built from the
    UTF-8 the rows already hold (`EncodedRow`; the first row says whether they do). A row
    without its bytes (another kind of row, a value put in place since) sends the whole column
    Arrow's own way, so what Arrow refuses is refused as ever."""
    name = field.name
    values = [row.get(name) for row in rows]
    binary = _BINARY_OF_TEXT.get(field.type)
    first = rows[0] if rows else None
    if binary is None or not isinstance(first, EncodedRow) or not first.carries(name):
        return values
    encoded = [row.utf8_of(name) if isinstance(row, EncodedRow) else None for row in rows]
    if any(data is None and value is not None for data, value in zip(encoded, values, strict=True)):
        return values
    return binary_array(encoded, binary).view(field.type)


def binary_array(values: list[bytes | None], binary: pa_arrow.DataType) -> pa_arrow.Array:
    """`pa.array(values, type=binary)` of bytes values, built at its exact size: Arrow's
    builder grows its data buffer by doubling and copies it each time (7% of ingest's samples
    under py-spy, the pages' column; ~0.3 CPU s of a 2 GB run's 16 measured); here the total
    is known and one join fills it. An array too large for 32-bit offsets is left to Arrow,
    which refuses it as ever."""
    present = [value for value in values if value is not None]
    data = b"".join(present)
    large = binary == pa_arrow.large_binary()
    if not large and (binary != pa_arrow.binary() or len(data) > _MAX_32_BIT_OFFSET):
        return pa_arrow.array(values, type=binary)
    lengths = (0 if value is None else len(value) for value in values)
    offsets = array("q" if large else "i", accumulate(lengths, initial=0))
    nulls = len(values) - len(present)
    validity = None
    if nulls:
        validity = pa_arrow.array([value is not None for value in values]).buffers()[1]
    buffers = [validity, pa_arrow.py_buffer(offsets), pa_arrow.py_buffer(data)]
    return pa_arrow.Array.from_buffers(binary, len(values), buffers, null_count=nulls)


_MAX_32_BIT_OFFSET = 2**31 - 1


# A text column's type over the same buffers holding bytes: a view of it reads them as text.
_BINARY_OF_TEXT = {
    pa_arrow.large_string(): pa_arrow.large_binary(),
    pa_arrow.string(): pa_arrow.binary(),
}


def _refused_value(model: type[pa.DataFrameModel], rows: list[dict]) -> ValueNotStorable:
    schema = arrow_schema(model)
    for field in schema:
        for number, row in enumerate(rows):
            try:
                pa_arrow.array([row.get(field.name)], type=field.type)
            except (pa_arrow.ArrowInvalid, pa_arrow.ArrowTypeError, TypeError, OverflowError):
                value = repr(row.get(field.name))[:80]
                return ValueNotStorable(
                    f"{model.__name__}: column {field.name!r} ({field.type}) cannot hold "
                    f"{value} (row {number})"
                )
    return ValueNotStorable(f"{model.__name__}: a row holds a value its column cannot hold")


def validate_arrow(model: type[pa.DataFrameModel], table: pa_arrow.Table) -> pa_arrow.Table:
    """A table already in the model's Arrow schema, validated against the model (the checks
    see it through Polars without copying the columns); returned as it is."""
    if table.schema != arrow_schema(model):
        raise ValueError(f"{model.__name__}: a table of another schema: {table.schema}")
    model.validate(pl.from_arrow(table, rechunk=False))
    return table


def column_descriptions(model: type[pa.DataFrameModel]) -> dict[str, str]:
    return {name: column.description or "" for name, column in model.to_schema().columns.items()}
