"""Contract of the raw layer: every source record, untouched, in a typed envelope."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from bigaction_assets.schemas.standardized import DomSnapshotSchema


class RawRecordSchema(pa.DataFrameModel):
    """One row per source record, readable or not."""

    dataset: str = pa.Field(description="Partition key of the landing dataset.")
    source_format: str = pa.Field(description="Source adapter that read it.")
    file: str = pa.Field(description="Landing file, relative to the landing folder.")
    line: pl.Int64 = pa.Field(ge=1, description="Line where the record starts.")
    record_index: pl.Int64 = pa.Field(ge=0, description="Record number within the file.")
    byte_offset: pl.Int64 = pa.Field(ge=0, description="Byte offset of the record in the file.")
    record_id: str = pa.Field(nullable=True, description="The record's own id, when readable.")
    text: str = pa.Field(
        description="The record exactly as it stands in the file, but for the pages `pages` "
        "names: their literals are cut out (and kept in `raw_pages`)."
    )
    pages: str = pa.Field(
        nullable=True,
        description="Pages cut out of `text`, JSON `[[offset, html_sha, column, escaping]]`: "
        "each goes back at its offset as its column of the raw_pages row, written as a JSON "
        "string by the encoder named (utf8: as is; ascii: with \\u escapes). Null: whole.",
    )
    error: str = pa.Field(nullable=True, description="Reason code when it could not be read.")
    error_detail: str = pa.Field(nullable=True, description="What was wrong, for a person.")

    class Config:
        name = "raw_records"
        strict = True
        coerce = True


class RawPageSchema(DomSnapshotSchema):
    """One row per page the raw step cut out of its records' texts, in the order it met them:
    the partition's `dom_snapshots` rows as its one pass made them (that table takes this file
    as it is when the pass's tables are taken)."""

    class Config:  # pandera reads only options set here, not inherited ones
        name = "raw_pages"
        strict = True
        coerce = True


UNREAD_REASONS = ("no_adapter", "unsupported_extension", "not_in_a_dataset", "unreadable")


class UnreadLandingFileSchema(pa.DataFrameModel):
    """One row per landing file that nothing reads, with why."""

    path: str = pa.Field(unique=True, description="The file, relative to the landing folder.")
    size: pl.Int64 = pa.Field(ge=0, description="Its size in bytes.")
    reason: str = pa.Field(
        isin=UNREAD_REASONS,
        description="no_adapter (a folder no adapter reads), unsupported_extension (a file "
        "ending its adapter does not read), not_in_a_dataset (not where its adapter looks), "
        "unreadable (Parquet cannot open it).",
    )
    detail: str = pa.Field(description="What is wrong and what is read there, for a person.")
    first_seen: str = pa.Field(description="When this table first listed it (UTC, ISO 8601).")

    class Config:
        name = "unread_landing_files"
        strict = True
        coerce = True
