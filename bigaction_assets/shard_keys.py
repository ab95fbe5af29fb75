"""Partition keys of landing datasets and their shards: `<adapter>.<dataset>[~<shard>]`."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

PARTITION_SEPARATOR = "."
# Between a dataset and its shard, and where a `/` stands in the shard's path below the
# dataset folder. `~` is unreserved in URLs (an S3 key or a signed URL never escapes it, where
# `+` turns into a space), no glob character for DuckDB or the shell (mid-word), not
# Dagster's range (`...`) nor multi-partition (`|`, `,`) syntax, no Hive `k=v`, and never in a
# dataset name (letters, digits, `-`, `_`), so the dataset is whatever stands before it.
SHARD_SEPARATOR = "~"
# A path part of a shard: what a dataset name may hold, plus single inner dots (Spark's
# `part-00000-<uuid>-c000.snappy.parquet`); never `..`/`...` (Dagster's range syntax).
_SHARD_PART = re.compile(r"^[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*$")
# A partition is a file `<key>.parquet`, written first as `.<key>.parquet.<32 hex>.tmp`: the
# longest key that still names a file on filesystems with 255-byte names, with room to spare.
MAX_KEY_CHARS = 200


def dataset_of(name: str) -> str:
    """The dataset a partition name or key stands for: itself, less any `~<shard>`."""
    return name.split(SHARD_SEPARATOR, 1)[0]


def shard_name(dataset: str, below: PurePosixPath) -> str:
    """`<dataset>~<path below the dataset folder, each / a ~, without the file's ending>`:
    from the file's name, never its position, so a shard added beside it renames nothing.

    Raises:
        ValueError: a part of the path that cannot stand in a key (spaces, `~`, `=`, `..`).
    """
    parts = [*below.parent.parts, below.name[: -len(below.suffix)] if below.suffix else below.name]
    for part in parts:
        if not _SHARD_PART.match(part):
            raise ValueError(
                f"landing shard {dataset}/{below} cannot name a partition: {part!r} must use "
                "only letters, digits, -, _ and single inner dots"
            )
    return SHARD_SEPARATOR.join([dataset, *parts])


def check_key_length(key: str) -> str:
    """The key, if a lake file can be named after it.

    Raises:
        ValueError: the key is longer than `MAX_KEY_CHARS`.
    """
    if len(key) > MAX_KEY_CHARS:
        raise ValueError(
            f"partition {key!r} is {len(key)} characters, over {MAX_KEY_CHARS}: a lake file "
            "cannot be named after it; shorten the landing folder or file names"
        )
    return key
