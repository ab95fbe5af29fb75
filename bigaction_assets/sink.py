"""Validated, batched writing of row dicts into a lake partition."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandera.polars as pa
import pyarrow

from bigaction_assets.lake import Lake
from bigaction_assets.lake_writer import PartitionWriter, open_partition
from bigaction_assets.schemas import arrow_schema, validate_arrow, validated_table

# Bounds on what is held before a flush: rows, and characters of text (pages run to megabytes).
MAX_ROWS = 5_000
MAX_CHARS = 16 * 1024 * 1024


class ValidatedSink:
    """Collects rows of one table, validates each batch against its contract, then writes it.

    Args:
        max_rows: rows held before a flush (default `MAX_ROWS`).
        max_chars: characters of text held before a flush (default `MAX_CHARS`). A contract
            check costs ~15 ms however few rows it sees, so a stage streaming gigabytes of
            pages holds more per batch to pay it less often.
    """

    def __init__(
        self,
        model: type[pa.DataFrameModel],
        writer: PartitionWriter,
        *,
        max_rows: int | None = None,
        max_chars: int | None = None,
    ) -> None:
        self.model = model
        self.writer = writer
        self.max_rows = max_rows or MAX_ROWS
        self.max_chars = max_chars or MAX_CHARS
        self.rows: list[dict[str, Any]] = []
        self.tables: list[pyarrow.Table] = []
        self.chars = 0
        self.total = 0

    def add(self, row: dict[str, Any]) -> None:
        if self.tables:  # what came first is written first
            self.flush()
        self.rows.append(row)
        self.total += 1
        for value in row.values():  # a plain loop: this runs once per candidate element
            if isinstance(value, (str, bytes)):
                self.chars += len(value)
        if len(self.rows) >= self.max_rows or self.chars >= self.max_chars:
            self.flush()

    def add_table(self, table: pyarrow.Table) -> None:
        """Rows already built in the contract's Arrow schema (by a worker process): held and
        validated together like rows, so the contract's fixed cost is paid as rarely."""
        if self.rows:
            self.flush()
        self.tables.append(table)
        self.total += table.num_rows
        self.chars += table.get_total_buffer_size()
        held = sum(t.num_rows for t in self.tables)
        if held >= self.max_rows or self.chars >= self.max_chars:
            self.flush()

    def flush(self) -> None:
        if self.rows:
            self.writer.write(validated_table(self.model, self.rows))
        elif self.tables:
            table = pyarrow.concat_tables(self.tables)
            self.writer.write(validate_arrow(self.model, table))
        self.rows, self.tables = [], []
        self.chars = 0


class PendingPartitions:
    """Rows of many small partitions of one table, validated together (a contract check has a
    fixed cost far above a small partition's rows), then each written whole to its own file."""

    def __init__(
        self,
        lake: Lake,
        group: str,
        asset: str,
        model: type[pa.DataFrameModel],
        on_invalid: Callable[[str, Exception], None] | None = None,
    ) -> None:
        """`on_invalid(partition, error)`: when given, rows the contract refuses cost only their
        own partition, written empty after this is called; without it the error is raised."""
        self.lake, self.group, self.asset, self.model = lake, group, asset, model
        self.on_invalid = on_invalid
        self.parts: list[tuple[str, int]] = []
        self.rows: list[dict[str, Any]] = []
        self.chars = 0

    def add(self, partition: str, rows: list[dict[str, Any]]) -> None:
        """All rows of one partition (none: the partition is written empty)."""
        self.parts.append((partition, len(rows)))
        self.rows += rows
        self.chars += sum(len(v) for row in rows for v in row.values() if isinstance(v, str))
        if len(self.rows) >= MAX_ROWS or self.chars >= MAX_CHARS:
            self.flush()

    def flush(self) -> None:
        try:
            table = validated_table(self.model, self.rows) if self.rows else None
        except Exception:  # the contract (or Arrow) refused a row: find whose
            if self.on_invalid is None:
                raise
            return self._flush_each()
        schema = arrow_schema(self.model)
        offset = 0
        for partition, count in self.parts:
            with open_partition(self.lake, self.group, self.asset, partition, schema) as writer:
                if count and table is not None:
                    writer.write(table.slice(offset, count))
            offset += count
        self.parts, self.rows, self.chars = [], [], 0

    def _flush_each(self) -> None:
        """Validate and write each partition on its own; a refused one is reported and
        written empty, so the rest land."""
        assert self.on_invalid is not None
        schema, offset = arrow_schema(self.model), 0
        for partition, count in self.parts:
            table = None
            try:
                rows = self.rows[offset : offset + count]
                table = validated_table(self.model, rows) if rows else None
            except Exception as exc:
                self.on_invalid(partition, exc)
            with open_partition(self.lake, self.group, self.asset, partition, schema) as writer:
                if table is not None:
                    writer.write(table)
            offset += count
        self.parts, self.rows, self.chars = [], [], 0
