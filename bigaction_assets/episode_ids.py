"""Episode ids repeated anywhere in the `episodes` table (and the benchmark snapshot's steps
anywhere in it), found in bounded memory and without reading every partition again at each step.

A group-by over the whole table held every id in DuckDB's hash table: past ~600,000 episodes
it ran out of the lake's query memory, and each partition's step read every partition again
(on an object store, a request per partition per step). Here each partition's ids become
64-bit hashes, sorted together (8 bytes an episode: 10 MB for 1.3 million); only partitions
holding a repeated hash are read again, to name the repeats from the ids themselves (two ids
that merely share a hash are no repeat). With a cache folder, a partition's hashes are kept on
the local disk by the version of its file (name, size, modification time: what a listing
gives, as for `lake_rows.table_rows`), so a step reads only the partitions new or rewritten since
that machine last looked. (An object store gives modification times to the second: a partition
rewritten at the same size within the second its hashes were taken would be taken from the
cache, as its row count would be by `lake_rows.table_rows`.)
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import uuid
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import read_file_columns
from bigaction_assets.lake_rows import table_file_versions
from bigaction_assets.row_counts import FileVersion

log = logging.getLogger(__name__)
HASHING = f"polars {pl.__version__} hash seed 0"
"""Polars keeps its hash stable within a version only: a cached array is valid for this one."""


@dataclass(frozen=True)
class KeyedTable:
    """A lake table whose `key` columns hold each value once across all its partitions; each
    row's `dataset` column names the landing dataset it came from."""

    group: str
    asset: str
    key: tuple[str, ...]


EPISODES = KeyedTable("standardized", "episodes", ("episode_id",))
SNAPSHOT_STEPS = KeyedTable("benchmark", "benchmark_snapshot", ("episode_id", "step"))


def id_hashes(ids: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Each id's 64-bit hash (a null id hashes like any other value, and is confirmed alike)."""
    series = pl.Series(ids)
    return series.hash(seed=0).to_numpy().astype(np.uint64)


def key_hashes(table: pa.Table) -> np.ndarray:
    """Each row's 64-bit hash of its key columns (one column: `id_hashes`, as cached before)."""
    if table.num_columns == 1:
        return id_hashes(table.column(0))
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.hash_rows(seed=0).to_numpy().astype(np.uint64)


class HashCache:
    """Hash arrays of partition file versions, one `.npy` file each, in a local folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, version: FileVersion) -> Path:
        name = hashlib.sha256(repr((HASHING, *version)).encode()).hexdigest()[:40]
        return self.folder / f"{name}.npy"

    def get(self, version: FileVersion) -> np.ndarray | None:
        try:
            return np.load(self.path(version), allow_pickle=False)
        except (FileNotFoundError, ValueError, EOFError, OSError):  # absent, or cut short
            return None

    def put(self, version: FileVersion, hashes: np.ndarray) -> None:
        """Keep `hashes`; a cache that cannot be written (a full disk) is reported, not fatal."""
        path = self.path(version)
        tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                np.save(handle, hashes, allow_pickle=False)
            os.replace(tmp, path)  # whole or absent for any reader
        except OSError as error:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            log.warning("episode id hashes not kept in %s: %s", self.folder, error)

    def keep_only(self, versions: list[FileVersion]) -> None:
        """Drop the arrays of versions the table no longer has (rewritten or erased files)."""
        wanted = {self.path(version).name for version in versions}
        if not self.folder.is_dir():
            return
        for path in self.folder.glob("*.npy"):
            if path.name not in wanted:
                path.unlink(missing_ok=True)


def repeated_episode_ids(
    lake: Lake, cache: Path | None = None, limit: int | None = 20
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The first `limit` episode ids (by id; all with None) found more than once in
    `episodes`, each with its number of copies and the datasets that hold them; and how much
    was read for it (`repeated_keys`)."""
    return repeated_keys(lake, EPISODES, cache, limit)


def repeated_keys(
    lake: Lake, table: KeyedTable, cache: Path | None = None, limit: int | None = 20
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The first `limit` keys of `table` (in key order; all with None) found more than once,
    each with its number of copies and the datasets that hold them; and how much was read
    for it: `partitions`, `partitions_read` (their keys read now, not taken from the cache),
    `partitions_confirmed` (read again to name repeats). `cache` holds one table's arrays."""
    store = HashCache(cache) if cache is not None else None
    versions = table_file_versions(lake, table.group, table.asset)
    arrays, read = [], 0
    for file, version in versions:
        hashes = store.get(version) if store is not None else None
        if hashes is None:
            try:
                hashes = key_hashes(read_file_columns(lake, file, list(table.key)))
            except FileNotFoundError:  # deleted since the listing (an erasure): no keys now
                hashes = np.empty(0, dtype=np.uint64)
            else:
                read += 1
                if store is not None:
                    store.put(version, hashes)
        arrays.append(hashes)
    if store is not None:
        store.keep_only([version for _, version in versions])
    suspects = _repeated_hashes(arrays)
    holders = [file for (file, _), hashes in zip(versions, arrays, strict=True)
               if suspects.size and np.isin(hashes, suspects).any()]  # fmt: skip
    offenders = _confirmed(lake, table.key, holders, suspects)
    tally = {"partitions": len(versions), "partitions_read": read,
             "partitions_confirmed": len(holders)}  # fmt: skip
    return offenders[:limit], tally


def _repeated_hashes(arrays: list[np.ndarray]) -> np.ndarray:
    if not arrays:
        return np.empty(0, dtype=np.uint64)
    every = np.sort(np.concatenate(arrays))
    return np.unique(every[1:][every[1:] == every[:-1]])


def _confirmed(
    lake: Lake, key: tuple[str, ...], holders: list[Any], suspects: np.ndarray
) -> list[dict[str, Any]]:
    """The suspects' rows read back from the partitions holding them, grouped by the key itself."""
    datasets: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    for file in holders:
        try:
            table = read_file_columns(lake, file, [*key, "dataset"])
        except FileNotFoundError:  # deleted since the listing
            continue
        keys = table.select(list(key))
        picked = table.filter(pa.array(np.isin(key_hashes(keys), suspects)))
        for *values, dataset in zip(*picked.to_pydict().values(), strict=True):
            datasets[tuple(values)].append(dataset)
    repeated = [
        {**dict(zip(key, values, strict=True)), "copies": len(found), "datasets": found}
        for values, found in datasets.items()
        if len(found) > 1
    ]
    return sorted(repeated, key=lambda row: tuple(_sortable(row[c]) for c in key))


def _sortable(value: Any) -> tuple[bool, Any]:
    return (True, "") if value is None else (False, value)  # nulls last
