"""The Parquet lake's layout: one file per asset partition, under a local folder or a store root.

`lake` is a local folder (a Path: the default, handled as it always was) or a `LakeRoot` from
lakefs.py (an object store: the same files, published whole through pyarrow.fs). Writing a
partition: lake_writer.py; reading it back: lake_reader.py; rows from the footers: lake_rows.py;
DuckDB over the files: lake_sql.py and catalog.py.
"""

from __future__ import annotations

from pathlib import Path

from bigaction_assets.lakefs import LakeRoot

Lake = Path | LakeRoot
"""A lake root: a local folder, or a root on some filesystem (lake_uri.parse_lake)."""


def table_dir(lake: Path, group: str, asset: str) -> Path:
    return lake / group / asset


def partition_path(lake: Path, group: str, asset: str, partition: str) -> Path:
    """`<lake>/<group>/<asset>/<partition>.parquet`; an unpartitioned asset uses `all`."""
    if "/" in partition or partition.startswith("."):
        raise ValueError(f"partition key {partition!r} cannot name a file")
    return table_dir(lake, group, asset) / f"{partition}.parquet"


def local_root(lake: Lake) -> Path | None:
    """The folder of a local lake (a Path, or a LakeRoot on the local disk); None for a store."""
    if isinstance(lake, Path):
        return lake
    return Path(lake.base) if lake.is_local else None


def partition_key(root: LakeRoot, group: str, asset: str, partition: str) -> str:
    """The object key of a partition: `partition_path`'s layout under the root."""
    return root.key(group, asset, partition_path(Path("."), group, asset, partition).name)


def partition_file(lake: Lake, group: str, asset: str, partition: str) -> Path | str:
    folder = local_root(lake)
    if folder is not None:
        return partition_path(folder, group, asset, partition)
    assert isinstance(lake, LakeRoot)
    return partition_key(lake, group, asset, partition)


def partition_exists(lake: Lake, group: str, asset: str, partition: str) -> bool:
    file = partition_file(lake, group, asset, partition)
    if isinstance(file, Path):
        return file.exists()
    assert isinstance(lake, LakeRoot)
    return lake.exists(file)


def partition_url(lake: Lake, group: str, asset: str, partition: str) -> str:
    """Where DuckDB reads a partition: its path, or its `s3://` URL on a connection that
    `register` gave the lake's store (`query_connection(lake)`)."""
    file = partition_file(lake, group, asset, partition)
    if isinstance(file, Path):
        return file.as_posix()
    assert isinstance(lake, LakeRoot)
    return lake.url(file)
