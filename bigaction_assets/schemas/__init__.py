"""Pandera contracts for every lake table, and the Arrow schemas derived from them."""

from __future__ import annotations

from functools import cache

import pandera.polars as pa
import polars as pl
import pyarrow as pa_arrow


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
        columns = [[row.get(name) for row in rows] for name in schema.names]
        table = pa_arrow.Table.from_arrays(columns, schema=schema)
    except (pa_arrow.ArrowInvalid, pa_arrow.ArrowTypeError, TypeError, OverflowError):
        return frame(model, rows).to_arrow()
    if any(len(row) > len(table.schema) for row in rows):
        return frame(model, rows).to_arrow()  # extra keys: let the strict contract name them
    model.validate(pl.from_arrow(table))
    return table


def column_descriptions(model: type[pa.DataFrameModel]) -> dict[str, str]:
    return {name: column.description or "" for name, column in model.to_schema().columns.items()}
