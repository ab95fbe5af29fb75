"""The contract every source adapter fulfils, and the records that flow through it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bigaction_assets.sources.csv_rows import iter_csv_records
from bigaction_assets.sources.jsonstream import iter_json_records, iter_jsonl_records
from bigaction_assets.sources.landing import find_datasets, split_shards
from bigaction_assets.sources.parquet_rows import iter_parquet_records
from bigaction_assets.sources.raw_text import IdReader, RawText

JSON_SUFFIXES = (".json", ".jsonl")
# The layouts the Hugging Face Hub publishes datasets in, besides JSON: Parquet shards and CSV.
HUB_SUFFIXES = (*JSON_SUFFIXES, ".parquet", ".csv")


@dataclass(frozen=True, slots=True)
class ParsedRecord:
    """A readable raw record: where it came from, its text (str, or UTF-8 bytes as the raw
    table hands it over), and its parsed JSON value."""

    file: str
    line: int
    record_index: int
    text: str | bytes
    value: Any


@dataclass(slots=True)
class StandardRecord:
    """What one episode standardizes to, before ids are checked across the dataset.

    Events, snapshots and candidates are row dicts shaped like their tables; `idx` and
    `episode_id` are filled in by the caller.
    """

    episode: dict[str, Any]
    events: list[dict[str, Any]]
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    origin: ParsedRecord | None = None
    members: list[ParsedRecord] = field(default_factory=list)
    """Every record the episode was made of, when it was several (a task's step rows)."""


@dataclass(frozen=True, slots=True)
class Rejection:
    record: ParsedRecord
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class Tally:
    """A count an adapter reports about its input that is neither an episode nor a reject,
    e.g. cached thoughts of trajectories the dataset does not hold; it shows in metadata."""

    name: str
    count: int


class RecordRejected(Exception):
    """Raised by adapter code for a record it cannot standardize; becomes a `rejects` row."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class SourceAdapter(Protocol):
    """One raw format: how to find its datasets, read its records and standardize them.

    Optional: `read_partition(dataset, files)`, the records a partition is made of with the
    file of each, for shards whose partitions read their neighbours' edges (Mind2Web's Hub
    step rows); without it a partition is its files' records, whole, in order."""

    name: str
    description: str
    suffixes: tuple[str, ...]
    """The file name endings it reads (what else lands in its folder is reported unread)."""

    def dataset_files(self, folder: Path) -> dict[str, list[Path]]:
        """Datasets in this adapter's landing folder, each with its files in reading order."""
        ...

    def source_name(self, dataset: str) -> str:
        """The `source` its episodes and rejects carry, e.g. the ADP dataset or `mind2web`."""
        ...

    def read(self, path: Path) -> Iterator[RawText]:
        """Every record of one file, exactly as it stands, with read errors marked."""
        ...

    def record_id(self, value: Any) -> str | None:
        """The record's own id, if it has one, for the raw table."""
        ...

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection | Tally]:
        """Episodes (or rejections) for a dataset's readable records, in order, and any
        tallies about the input."""
        ...

    def redistributable(self, dataset: str) -> bool:
        """Whether the dataset's license lets us publish it; a release refuses it otherwise."""
        ...


def read_records(path: Path, record_id: IdReader) -> Iterator[RawText]:
    """Records of a landing file by its ending: Parquet and CSV rows as JSON objects keyed by
    column name, `.jsonl` lines (a line may hold an array), else JSON (an array or lines)."""
    if path.suffix == ".parquet":
        return iter_parquet_records(path, record_id)
    if path.suffix == ".csv":
        return iter_csv_records(path, record_id)
    if path.suffix == ".jsonl":
        return iter_jsonl_records(path, record_id)
    return iter_json_records(path, record_id)


class LandingFilesAdapter:
    """What most adapters share: datasets are files (or folders of shards, a partition each
    as `shard_files` cuts them) of one `source`, read record by record: JSON and JSONL, and
    Parquet and CSV for an adapter whose `suffixes` name them. A subclass sets `name`,
    `description` and `source`, and defines `record_id`, `standardize` and `redistributable`."""

    name: str
    description: str
    source: str
    suffixes: tuple[str, ...] = JSON_SUFFIXES

    def dataset_files(self, folder: Path) -> dict[str, list[Path]]:
        return split_shards(folder, find_datasets(folder, self.suffixes), self.shard_files)

    def shard_files(self, dataset: str, files: list[Path]) -> list[list[Path]] | None:
        """How a folder dataset's files become partitions: per shard, its own file and then
        any neighbour its partition reads an edge of; None keeps the folder one partition.
        By default each file alone: its records are whole in it (no episode spans two)."""
        return [[path] for path in files]

    def source_name(self, dataset: str) -> str:
        return self.source

    def read(self, path: Path) -> Iterator[RawText]:
        return read_records(path, self.record_id)

    def record_id(self, value: Any) -> str | None:
        return None
