"""DuckDB over the lake: connections with bounded memory that read local or s3:// files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from bigaction_assets.lakefs import LakeRoot

# Queries over the lake stream Parquet; DuckDB's defaults (a cache of every file read, 80% of
# RAM) would let a check or an export hold gigabytes it does not need.
QUERY_MEMORY_LIMIT = "256MB"


def query_connection(lake: Path | LakeRoot | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection for querying lake files with bounded memory; on an
    object-store lake it reads `s3://` URLs through the lake's own store (`register`)."""
    con = duckdb.connect()
    con.execute(
        f"set memory_limit = '{QUERY_MEMORY_LIMIT}'; set enable_external_file_cache = false"
    )
    if lake is not None:
        register(con, lake)
    return con


def register(con: duckdb.DuckDBPyConnection, lake: Path | LakeRoot) -> None:
    """Let `con` read an object-store lake's `s3://` URLs (nothing to do for a local one).
    DuckDB's httpfs extension is a download at run time; s3fs is a locked package."""
    if isinstance(lake, LakeRoot) and lake.s3 is not None:
        con.register_filesystem(lake.s3.fsspec())


def stream_rows(
    con: duckdb.DuckDBPyConnection, sql: str, batch_rows: int = 256
) -> Iterator[tuple[Any, ...]]:
    """Rows of a query, a record batch at a time: `fetchmany` on a plain `execute` holds the
    whole result, which for tables of long texts is hundreds of megabytes."""
    reader = con.execute(sql).to_arrow_reader(batch_rows)
    for batch in reader:
        columns = [column.to_pylist() for column in batch.columns]
        yield from zip(*columns, strict=True)
