"""Rows of lake tables from their Parquet footers, each footer read once per version of its file."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from bigaction_assets.lake import Lake, local_root, table_dir
from bigaction_assets.lake_reader import table_files
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.row_counts import FileVersion, RowCounts


def footer_rows(lake: Lake, file: Path | str) -> int:
    """Rows of a partition file, read from its footer alone."""
    if isinstance(file, Path):
        return pq.read_metadata(file).num_rows
    assert isinstance(lake, LakeRoot)
    with lake.open(file) as handle:
        return pq.read_metadata(handle).num_rows


FOOTER_MEMO_SIZE = 65_536
_footer_memo: dict[FileVersion, int] = {}


def table_file_versions(lake: Lake, group: str, asset: str) -> list[tuple[Path | str, FileVersion]]:
    """A table's partition files (paths or keys), each with its version: on a store from one
    listing, with no request per object."""
    if local_root(lake) is None:
        assert isinstance(lake, LakeRoot)
        return [(key, (key, *stamp)) for key, *stamp in lake.list_parquet_stamps(group, asset)]
    versions: list[tuple[Path | str, FileVersion]] = []
    for path in table_files(lake, group, asset):
        try:
            stat = Path(path).stat()
        except FileNotFoundError:  # deleted since the listing
            continue
        versions.append((path, (str(path), stat.st_size, stat.st_mtime_ns)))
    return versions


def _table_prefix(lake: Lake, group: str, asset: str) -> str:
    """What the names in a table's file versions start with."""
    folder = local_root(lake)
    if folder is not None:
        return f"{table_dir(folder, group, asset)}/"
    assert isinstance(lake, LakeRoot)
    return f"{lake.key(group, asset)}/"


def table_rows(
    lake: Lake, group: str, asset: str, remembered: RowCounts | None = None
) -> tuple[int, int]:
    """Rows and partition files of a whole table, from the Parquet footers (`file_rows`)."""
    counts = file_rows(lake, group, asset, remembered)
    return sum(rows for _, rows in counts), len(counts)


def file_rows(
    lake: Lake, group: str, asset: str, remembered: RowCounts | None = None
) -> list[tuple[Path | str, int]]:
    """Each partition file of a table (path or key) with its rows, from the Parquet footers.
    A footer is read once per version of its file in this process (known by the size and
    modification time the listing gives), so the materializations of N partitions read N
    footers, not N^2; with `remembered`, once per version on this machine, whichever process
    asks. A file gone between the listing and its read is left out."""
    versions = table_file_versions(lake, group, asset)
    stored = remembered.known(_table_prefix(lake, group, asset)) if remembered else {}
    found, counted = [], {}
    for file, version in versions:
        count = _footer_memo.get(version, stored.get(version))
        if count is None:
            try:
                count = footer_rows(lake, file)
            except FileNotFoundError:  # deleted since the listing
                continue
        if version not in stored:
            counted[version] = count
        if len(_footer_memo) >= FOOTER_MEMO_SIZE:
            _footer_memo.clear()
        _footer_memo[version] = count
        found.append((file, count))
    if remembered is not None:
        listed = {version for _, version in versions}
        remembered.remember(counted, [v for v in stored if v not in listed])
    return found
