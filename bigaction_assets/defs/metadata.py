"""Small helpers that turn rows into metadata a person reads in the UI."""

from typing import Any

import dagster as dg
import pandera.polars as pa

from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.images.store import iter_images
from bigaction_assets.images.thumbnail import thumbnail_markdown
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import open_parquet
from bigaction_assets.lake_rows import table_rows
from bigaction_assets.row_counts import RowCounts
from bigaction_assets.schemas import column_descriptions, polars_schema

PREVIEW_CELL_CHARS = 60


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\n", " ").replace("|", "\\|")
    return text if len(text) <= PREVIEW_CELL_CHARS else text[: PREVIEW_CELL_CHARS - 1] + "…"


def markdown_preview(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of a few rows, each cell cut short."""
    if not rows:
        return "_no rows_"
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(row.get(c)) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def column_schema(model: type[pa.DataFrameModel]) -> dg.TableSchema:
    """The table's columns, types and descriptions, from its pandera contract."""
    return dg.TableSchema(
        columns=[
            dg.TableColumn(name, str(dtype), description=column_descriptions(model)[name])
            for name, dtype in polars_schema(model).items()
        ]
    )


def totals_across_partitions(
    lake: LakeResource, group: str, asset: str
) -> dict[str, dg.MetadataValue]:
    """Rows and partitions of the whole table, beside a partition's own `dagster/row_count`:
    plain numbers, so the UI's Plots tab draws how the table grows from one run to the next.
    Read from the Parquet footers (no row is read), each once per file version on a machine."""
    rows, files = table_rows(lake.store, group, asset, remembered=RowCounts(lake.row_counts))
    return {
        "total_rows_all_partitions": dg.MetadataValue.int(rows),
        "partitions_in_lake": dg.MetadataValue.int(files),
    }


def image_thumbnail(lake: Lake, key: str, sha: str | None = None) -> str:
    """Markdown of a thumbnail of one image of partition `key` of `images`: the one hashed
    `sha`, else the first stored; a line saying there is none otherwise (or `sha` is empty)."""
    if sha is not None:
        found = next(iter_images(lake, [sha], partitions=[key]), None)
    else:
        found = None
        parquet = open_parquet(lake, "standardized", "images", key)  # a folder or a store
        if parquet is not None:
            batches = parquet.iter_batches(1, columns=["image_sha", "bytes"])
            found = next((batch.to_pylist()[0] for batch in batches if batch.num_rows), None)
    if found is None:
        return "_no screenshot to show_"
    return thumbnail_markdown(found["bytes"], f"screenshot {found['image_sha'][:12]}")
