"""Which lake datasets a release may carry, and where each came from (landing files, sha256)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import table_files
from bigaction_assets.rerun.fingerprint import file_sha256
from bigaction_assets.shard_keys import dataset_of
from bigaction_assets.sources import split_partition_key

RELEASED_TABLES = (
    ("standardized", "episodes"),
    ("standardized", "events"),
    ("sft", "sft_examples"),
)
# Released too, but one table across datasets (partition `all`), so not a source of datasets.
CROSS_DATASET_TABLES = (("reward", "reward_examples"),)


class NotRedistributable(Exception):
    """Some datasets in the lake may not be published; the message names them."""

    def __init__(self, datasets: list[str]) -> None:
        self.datasets = datasets
        # a sharded dataset's shards are left out by naming the dataset once
        names = sorted({dataset_of(d) for d in datasets})
        super().__init__(
            f"refusing to release {len(datasets)} dataset(s) whose license forbids "
            f"redistribution: {', '.join(datasets)}. Leave them out with the release config "
            f"`exclude_datasets: {names}` (they will be listed as excluded in the card)."
        )


@dataclass(frozen=True)
class LandingFile:
    path: str
    sha256: str
    bytes: int


@dataclass(frozen=True)
class DatasetProvenance:
    dataset: str
    source_format: str
    files: list[LandingFile] = field(default_factory=list)


def lake_datasets(lake: Lake) -> list[str]:
    """Every dataset (partition key) that has a file in any released table."""
    keys = {
        path.stem if isinstance(path, Path) else path.rsplit("/", 1)[-1].removesuffix(".parquet")
        for group, asset in RELEASED_TABLES
        for path in table_files(lake, group, asset)
    }
    return sorted(keys)


def redistributable(dataset: str) -> bool:
    """What the dataset's source adapter says; a dataset no adapter knows is not."""
    try:
        adapter, name = split_partition_key(dataset)
    except ValueError:
        return False
    return adapter.redistributable(dataset_of(name))


def releasable(datasets: list[str], exclude: list[str]) -> list[str]:
    """The datasets (partition keys) to publish: all but the excluded ones, where excluding a
    sharded dataset (`mind2web.test_task`) excludes each of its shards; raises if any left may
    not be published."""
    left_out = set(exclude)
    kept = [d for d in datasets if d not in left_out and dataset_of(d) not in left_out]
    refused = [d for d in kept if not redistributable(d)]
    if refused:
        raise NotRedistributable(refused)
    return kept


def sha256_file(path: Path, chunk: int = 2**20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def landing_provenance(landing: Path, dataset: str) -> DatasetProvenance:
    """The dataset's landing files (relative to the landing folder) with their sha256."""
    adapter, name = split_partition_key(dataset)
    paths = adapter.dataset_files(landing / adapter.name).get(name, [])
    files = [
        LandingFile(
            path=p.relative_to(landing).as_posix() if p.is_relative_to(landing) else p.name,
            sha256=file_sha256(p),  # ingest hashed it already: remembered by stat key
            bytes=p.stat().st_size,
        )
        for p in paths
    ]
    return DatasetProvenance(dataset=dataset, source_format=adapter.name, files=files)
