"""Builds a release folder from the lake: Parquet shards per config, partition and split
(`data/<config>/<partition>/<split>-NNNNN-of-NNNNN.parquet`), card, manifest."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.durable import same_files
from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import iter_row_groups
from bigaction_assets.release.card import CardData, render_card
from bigaction_assets.release.columns import CONSUMER_COLUMNS, schema_with, sft_table
from bigaction_assets.release.features import with_features
from bigaction_assets.release.histogram import histogram, svg
from bigaction_assets.release.images import write_images
from bigaction_assets.release.parts import Parts, PartTally
from bigaction_assets.release.provenance import landing_provenance, sha256_file
from bigaction_assets.release.reward import reward_configs
from bigaction_assets.release.shards import DEFAULT_SHARD_BYTES, ParquetShardWriter
from bigaction_assets.release.tally import Tally
from bigaction_assets.rerun.graph import source_hash
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.sft import SFT_FORMATS, SftExampleSchema
from bigaction_assets.schemas.standardized import EpisodeSchema, EventSchema
from bigaction_assets.sft.image_files import PartitionImages

MANIFEST = "release_manifest.json"
CARD = "README.md"
HISTOGRAM = "token_lengths.svg"
SPLITS = ("train", "validation", "test")
SFT_COLUMNS = ("example_id", "split", "source")
DATA = "data"  # the release's folder of shards: data/<config>/<partition>/


@dataclass
class ReleaseSettings:
    max_shard_bytes: int = DEFAULT_SHARD_BYTES
    """Largest shard, in Arrow bytes; a config's split gets as many shards as it needs."""
    pretty_name: str = "BigAction"
    license: str = "other"
    excluded: list[str] = field(default_factory=list)
    pipeline: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    repo_id: str | None = None
    """The Hub repository it is published to, named in the card's examples."""


@dataclass
class ReleaseSummary:
    folder: Path
    rows: dict[str, dict[str, int]]
    files: dict[str, dict[str, Any]]
    content_sha256: str

    @property
    def bytes(self) -> int:
        return sum(f["bytes"] for f in self.files.values())


class EmptyRelease(Exception):
    """The lake holds nothing to release."""


def _counts(column: pa.ChunkedArray) -> dict[str, int]:
    return {row["values"]: row["counts"] for row in pc.value_counts(column).to_pylist()}


def _standardized(
    lake: Lake, data: Path, datasets: list[str], cap: int, tally: Tally, parts: Parts
) -> dict[str, str]:
    """`episodes` and `events`, one `train` split each, a shard set per partition; events count
    towards their episodes' source. Returns each dataset's source."""
    source_of: dict[str, str] = {}
    for asset, model in (("episodes", EpisodeSchema), ("events", EventSchema)):
        schema = arrow_schema(model)
        for dataset in datasets:
            if not partition_exists(lake, "standardized", asset, dataset):
                continue
            name = f"{asset}/{dataset}"
            # the episodes name the source the events count towards: an input of both
            inputs = [("standardized", "episodes", dataset), ("standardized", asset, dataset)]
            key = parts.key(name, inputs)
            kept = parts.keep(name, key, tally)
            if kept is not None:
                if "source" in kept:
                    source_of.setdefault(dataset, kept["source"])
                continue
            counts = PartTally(tally)
            writer = ParquetShardWriter(data / asset / dataset, "train", schema, cap)
            for table in iter_row_groups(lake, "standardized", asset, dataset):
                writer.write(table)
                if asset == "episodes":
                    for source, n in _counts(table["source"]).items():
                        source_of.setdefault(dataset, source)
                        counts.add(asset, "train", source, n)
                else:
                    counts.add(asset, "train", source_of.get(dataset, dataset), table.num_rows)
            writer.close()
            counts.add_rows(asset, "train", writer.rows)
            extra = (
                {"source": source_of[dataset]}
                if asset == "episodes" and dataset in source_of
                else {}
            )
            parts.record(name, key, [f"{DATA}/{asset}/{dataset}"], counts, extra)
    return source_of


def _sft(
    lake: Lake, data: Path, datasets: list[str], cap: int, tally: Tally, parts: Parts
) -> Counter[int]:
    """One config per SFT format, split by the examples' own split, a shard set per partition;
    returns token lengths."""
    full = arrow_schema(SftExampleSchema)
    ids = [full.field(c) for c in SFT_COLUMNS]
    schemas = {f: with_features(schema_with(ids, CONSUMER_COLUMNS[f])) for f in SFT_FORMATS}
    tokens: Counter[int] = Counter()
    for dataset in datasets:
        if not partition_exists(lake, "sft", "sft_examples", dataset):
            continue
        name = f"sft/{dataset}"
        inputs = [("sft", "sft_examples", dataset), ("standardized", "images", dataset)]
        key = parts.key(name, inputs)
        kept = parts.keep(name, key, tally)
        if kept is None:
            counts = PartTally(tally)
            lengths = _sft_partition(lake, data, dataset, schemas, cap, counts)
            folders = [f"{DATA}/sft_{fmt}/{dataset}" for fmt in SFT_FORMATS]
            parts.record(name, key, folders, counts, {"tokens": sorted(lengths.items())})
        else:
            lengths = Counter(dict(kept["tokens"]))
        tokens.update(lengths)
    for fmt in SFT_FORMATS:  # the card names every split of a config, empty or not, in order
        config = f"sft_{fmt}"
        made = tally.rows.get(config, {})
        order = dict.fromkeys([*SPLITS, *sorted(made, key=_split_order)])
        tally.rows[config] = {split: made.get(split, 0) for split in order}
    return tokens


def _sft_partition(
    lake: Lake,
    data: Path,
    dataset: str,
    schemas: dict[str, pa.Schema],
    cap: int,
    counts: PartTally,
) -> Counter[int]:
    """One dataset's examples as each format's config, a shard set per split; returns their
    token lengths."""
    lengths: Counter[int] = Counter()
    writers: dict[tuple[str, str], ParquetShardWriter] = {}
    images = PartitionImages(lake, dataset)  # what the examples show, as image features
    columns = [*SFT_COLUMNS, "tokens", *SFT_FORMATS]
    for table in iter_row_groups(lake, "sft", "sft_examples", dataset, columns):
        lengths.update(table["tokens"].to_pylist())
        for split in sorted(set(table["split"].to_pylist())):
            in_split = pc.equal(table["split"], split)
            for fmt in SFT_FORMATS:
                # this format's renderings alone are filtered (each copied once), and only
                # where it was made (null: not made)
                wanted = pc.and_(in_split, pc.is_valid(table[fmt]))
                made = table.select([*SFT_COLUMNS, fmt]).filter(wanted)
                if made.num_rows == 0:
                    continue
                config = f"sft_{fmt}"
                if (config, split) not in writers:
                    folder = data / config / dataset
                    writers[config, split] = ParquetShardWriter(folder, split, schemas[fmt], cap)
                writers[config, split].write(sft_table(made, fmt, schemas[fmt], images.read_path))
                for source, n in _counts(made["source"]).items():
                    counts.add(config, split, source, n)
    for (config, split), writer in writers.items():
        writer.close()
        counts.add_rows(config, split, writer.rows)
    return lengths


def _split_order(split: str) -> tuple[int, str]:
    return (SPLITS.index(split) if split in SPLITS else len(SPLITS), split)


def file_digests(
    folder: Path, known: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """sha256 and size of every file of a release, by path within it (the manifest excluded);
    `known`: digests of files already verified (parts kept from the release before)."""
    known = known or {}
    digests = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder).as_posix()
        if relative in known:
            digests[relative] = known[relative]
        elif relative != MANIFEST:
            digests[relative] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    return digests


def content_sha256(files: dict[str, dict[str, Any]]) -> str:
    """One hash for the release's content: equal hashes, equal files."""
    listing = "".join(f"{path}\0{files[path]['sha256']}\n" for path in sorted(files))
    return hashlib.sha256(listing.encode()).hexdigest()


def reuse_unchanged(new: Path, old: Path) -> int:
    """Hard-link into `new` every file `old` already holds with the same bytes, so that swapping
    the folders leaves an unchanged shard, card or manifest with its inode and mtime: only the
    files whose content changed are new. Returns how many files were kept."""
    kept = 0
    if not old.is_dir():
        return kept
    for path in sorted(p for p in new.rglob("*") if p.is_file()):
        previous = old / path.relative_to(new)
        if previous.is_file() and os.path.samefile(path, previous):  # a part kept, linked
            kept += 1
            continue
        if previous.is_file() and same_files(path, previous):
            link = path.with_name(f".{path.name}.{uuid.uuid4().hex}.link")
            os.link(previous, link)
            os.replace(link, path)
            kept += 1
    return kept


def replace_folder(new: Path, target: Path) -> None:
    """Put `new` where `target` is, the old one moved aside first and removed last."""
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex}")
    if target.exists():
        os.replace(target, old)
    try:
        os.replace(new, target)
    except BaseException:
        if old.exists():
            os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def build_release(
    lake: Lake, landing: Path, out: Path, datasets: list[str], settings: ReleaseSettings
) -> ReleaseSummary:
    """Writes the release of `datasets` to `out`, atomically: built aside, then swapped in."""
    tmp = out.with_name(f".{out.name}.tmp-{uuid.uuid4().hex}")
    try:
        tally = Tally()
        # what shapes every part's bytes besides the code: the cap, versions, the Parquet writer
        shaping = {
            "max_shard_bytes": settings.max_shard_bytes,
            "pipeline": settings.pipeline,
            "pyarrow": pa.__version__,
        }
        parts = Parts(lake, tmp, out, MANIFEST, shaping, source_hash())
        data, cap = tmp / DATA, settings.max_shard_bytes
        sources = _standardized(lake, data, datasets, cap, tally, parts)
        images = write_images(lake, data, datasets, cap, tally, sources, parts)
        tokens = _sft(lake, data, datasets, cap, tally, parts)
        reward_configs(lake, data, datasets, cap, tally)
        if not any(sum(splits.values()) for splits in tally.rows.values()):
            raise EmptyRelease(f"no episodes or SFT examples in {lake} for {datasets}")
        examples = sum(tokens.values())
        (tmp / HISTOGRAM).write_text(svg(histogram(tokens), "Token lengths of SFT examples"))
        card = CardData(
            pretty_name=settings.pretty_name,
            license=settings.license,
            rows={c: dict(s) for c, s in tally.rows.items()},
            by_source={
                c: {src: dict(splits) for src, splits in by.items()}
                for c, by in tally.by_source.items()
            },
            histogram_file=HISTOGRAM,
            image_summary=images,
            token_summary={
                "examples": examples,
                "mean": round(sum(t * n for t, n in tokens.items()) / examples) if examples else 0,
                "max": max(tokens, default=0),
            },
            provenance=[landing_provenance(landing, d) for d in datasets],
            excluded=sorted(settings.excluded),
            pipeline=settings.pipeline,
            config=settings.config,
            repo_id=settings.repo_id,
        )
        (tmp / CARD).write_text(render_card(card), encoding="utf-8")
        files = file_digests(tmp, parts.kept_files)
        digest = content_sha256(files)
        manifest = {"content_sha256": digest, "rows": card.rows, "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        reuse_unchanged(tmp, out)
        replace_folder(tmp, out)
        parts.save(out, digest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ReleaseSummary(folder=out, rows=card.rows, files=files, content_sha256=digest)
