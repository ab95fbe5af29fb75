"""Agent Data Protocol (ADP) standardized trajectories: the source adapter.

Trajectories go through the codec (`adp_codec`, then `adp_codec_export`: import then export
gives back the same trajectories); a dataset's thought cache, if it ships one, through
`adp_thoughts`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bigaction_assets.sources import adp_thoughts
from bigaction_assets.sources.adp_codec import import_trajectory
from bigaction_assets.sources.adp_codec_export import export_trajectory
from bigaction_assets.sources.base import (
    LandingFilesAdapter,
    ParsedRecord,
    RecordRejected,
    Rejection,
    StandardRecord,
    Tally,
)
from bigaction_assets.sources.landing import find_datasets, split_shards
from bigaction_assets.sources.raw_text import RawText

__all__ = ["ADAPTER", "AdpAdapter", "export_trajectory", "import_trajectory"]


class AdpAdapter(LandingFilesAdapter):
    name = "adp"
    description = (
        "Agent Data Protocol standardized trajectories (JSON array or JSONL); a dataset's "
        "thought cache beside it as <dataset>.generated_thoughts.json"
    )

    def source_name(self, dataset: str) -> str:
        return dataset  # an ADP file (or folder of shards) holds one dataset: synatra, ...

    def redistributable(self, dataset: str) -> bool:
        return True  # the ADP samples are published for reuse

    def dataset_files(self, folder: Path) -> dict[str, list[Path]]:
        """Datasets as usual, each with its thought cache (`adp_thoughts`) first if it has one;
        a folder without a cache is a partition per file (`landing.split_shards`)."""
        found = find_datasets(folder, (".json", ".jsonl"), (adp_thoughts.CACHE_SUFFIX,))
        found = adp_thoughts.attach_caches(folder, found)
        return split_shards(folder, found, self.shard_files)

    def shard_files(self, dataset: str, files: list[Path]) -> list[list[Path]] | None:
        """A trajectory is one record; but a thought cache joins thoughts to trajectories in
        every file of its dataset (and counts those it never met), so such a dataset stays one
        partition rather than repeat the cache, its rejects and tallies in every shard."""
        return None if adp_thoughts.is_cache_file(files[0]) else super().shard_files(dataset, files)

    def read(self, path: Path) -> Iterator[RawText]:
        if adp_thoughts.is_cache_file(path):
            return adp_thoughts.read_cache_file(path)
        return super().read(path)

    def record_id(self, value: Any) -> str | None:
        if isinstance(value, dict) and isinstance(value.get("id"), str | int):
            return str(value["id"])
        return None

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection | Tally]:
        cache: adp_thoughts.ThoughtCache | None = None
        for record in records:
            try:
                if adp_thoughts.is_cache_file(record.file):  # read first: see attach_caches
                    cache, rejections = adp_thoughts.load_thought_cache(record)
                    yield from rejections
                    continue
                standard = import_trajectory(record.value, source=self.source_name(dataset))
            except RecordRejected as exc:
                yield Rejection(record, exc.reason, exc.detail)
                continue
            if cache is not None:
                yield from cache.apply(standard.episode["source_id"], standard.events)
            standard.origin = record
            yield standard
        if cache is not None:
            yield from cache.final_tallies()


ADAPTER = AdpAdapter()
