"""Pandera contracts for every lake table, and the Arrow schemas derived from them."""

from __future__ import annotations

from functools import cache

import pandera.polars as pa
import polars as pl
import pyarrow as pa_arrow

from bigaction_assets.arrow_arrays import BINARY_OF_TEXT, binary_array
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
    binary = BINARY_OF_TEXT.get(field.type)
    first = rows[0] if rows else None
    if binary is None or not isinstance(first, EncodedRow) or not first.carries(name):
        return values
    encoded = [row.utf8_of(name) if isinstance(row, EncodedRow) else None for row in rows]
    if any(data is None and value is not None for data, value in zip(encoded, values, strict=True)):
        return values
    return binary_array(encoded, binary).view(field.type)


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
