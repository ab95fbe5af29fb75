"""Reading the `images` table back: image rows and bytes by hash, streamed a row group at a time.

The table stores the bytes beside their metadata (see docs/spine.md, "Images"): Parquet reads
only the columns a query names, so `select width, height from images` never touches the bytes,
and whatever needs pixels (the SFT formats, the benchmark's first turn, the release's `Image`
columns) reads them here, one row group in memory at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from bigaction_assets.lake import Lake, table_dir
from bigaction_assets.lake_reader import parquet_reader, table_files

GROUP, ASSET = "standardized", "images"
META_COLUMNS = ("image_sha", "format", "width", "height", "byte_size", "location")


def partition_files(lake: Lake, partitions: Iterable[str] | None = None) -> list[Path | str]:
    """The table's partition files (of the given partitions only, when named)."""
    if not isinstance(lake, Path):
        every = table_files(lake, GROUP, ASSET)
        return [f for f in every if partitions is None or _key_of(f) in set(partitions)]
    folder = table_dir(lake, GROUP, ASSET)
    if partitions is None:
        return sorted(folder.glob("*.parquet"))
    return [
        folder / f"{key}.parquet" for key in partitions if (folder / f"{key}.parquet").is_file()
    ]


def _key_of(file: str) -> str:
    return file.rsplit("/", 1)[-1].removesuffix(".parquet")


def iter_images(
    lake: Lake,
    shas: Iterable[str] | None = None,
    *,
    with_bytes: bool = True,
    partitions: Iterable[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Rows of `images` whose hash is in `shas` (every row when None), each hash once (a page
    seen by two datasets is stored by both). Only the row groups holding a wanted hash are
    read past their `image_sha` column, and only its wanted rows are converted."""
    wanted = None if shas is None else set(shas)
    columns = [*META_COLUMNS, "bytes"] if with_bytes else list(META_COLUMNS)
    done: set[str] = set()
    for path in partition_files(lake, partitions):
        parquet = parquet_reader(lake, path)
        for index in range(parquet.num_row_groups):
            keys = parquet.read_row_group(index, columns=["image_sha"]).column(0).to_pylist()
            picked = [
                k for k, sha in enumerate(keys)
                if sha not in done and (wanted is None or sha in wanted)
            ]  # fmt: skip
            if not picked:
                continue
            rows = parquet.read_row_group(index, columns=columns).take(picked)
            for row in rows.to_pylist():
                if row["image_sha"] not in done:
                    done.add(row["image_sha"])
                    yield row
            if wanted is not None and wanted <= done:
                return


def image_bytes(lake: Path, sha: str) -> bytes | None:
    """The bytes of one image, by its sha256 (None when the lake has no such image)."""
    return next((row["bytes"] for row in iter_images(lake, [sha])), None)
