"""SFT training files: one JSONL per format and split, plus LLaMA-Factory's dataset_info.json.

Memory does not grow with the data: each `sft_examples` partition is read in the order it was
written (deterministic: the same bytes for any number of workers), partitions in sorted key
order, one row group, one column and 256 rows at a time. That order is as stable as a sort by
example id was, so a rerun writes the same bytes, and no sort has to hold every rendering.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bigaction_assets.durable import replace_unless_same
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import parquet_reader, table_files
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.schemas.sft import SFT_FORMATS
from bigaction_assets.sft.dedup import SeenContent
from bigaction_assets.sft.image_files import PartitionImages, inline_images, write_image_files
from bigaction_assets.sft.images import IMAGE_FOLDER
from bigaction_assets.sft.sharegpt_format import dataset_info

GROUP = "sft"
DATASET_PREFIX = "bigaction"
INFO = "dataset_info.json"
BATCH_ROWS = 256


def _atomic(stack: ExitStack, path: Path) -> IO[bytes]:
    """A file that appears at `path`, whole, only when the stack closes without error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    handle = open(tmp, "wb")  # noqa: SIM115 - closed and renamed by the callback below

    def finish(exc_type: type | None, *_: Any) -> None:
        handle.close()
        if exc_type is None:
            replace_unless_same(tmp, path)  # an unchanged file keeps its mtime
        else:
            tmp.unlink(missing_ok=True)

    stack.push(finish)
    return handle


def _write_lines(handle: IO[bytes], texts: pa.Array) -> None:
    """Each text and a newline, written from Arrow's buffer: no Python string per example."""
    empty, newline = pa.scalar("", texts.type), pa.scalar("\n", texts.type)
    lines = pc.binary_join_element_wise(texts, empty, newline)  # text, newline, nothing
    _, offsets, data = lines.buffers()
    if data is not None:  # the lines lie end to end in the data buffer, from first to last offset
        ends = memoryview(offsets).cast("q" if pa.types.is_large_string(lines.type) else "i")
        handle.write(memoryview(data)[ends[lines.offset] : ends[lines.offset + len(lines)]])


class _Files:
    """The open `<out>/<format>/<split>.jsonl` files, each created at its first line."""

    def __init__(self, stack: ExitStack, out: Path) -> None:
        self.stack, self.out = stack, out
        self.handles: dict[tuple[str, str], IO[bytes]] = {}
        self.images: set[str] = set()  # image files the sharegpt folder holds
        self.splits_with_images: set[str] = set()  # sharegpt splits with an `images` column

    def write(self, name: str, split: str, texts: pa.Array) -> None:
        texts = texts.drop_null()  # a format left out of an example is null: no line
        if len(texts) == 0:
            return
        if (name, split) not in self.handles:
            path = self.out / name / f"{split}.jsonl"
            self.handles[name, split] = _atomic(self.stack, path)
        _write_lines(self.handles[name, split], texts)

    def paths(self) -> list[Path]:
        return [self.out / name / f"{split}.jsonl" for name, split in sorted(self.handles)]


def _split_masks(
    parquet: pq.ParquetFile, index: int, seen: SeenContent, counts: Counter[str]
) -> tuple[dict[str, pa.BooleanArray], int, list[list[str]]]:
    """Per split, which rows of row group `index` to write: those whose content was not seen
    before (the first copy in partition order wins). Also returns the copies dropped and each
    row's images."""
    columns = ["split", "content_sha", "images"]
    light = parquet.read_row_group(index, columns=columns, use_threads=False)
    shas, splits = light["content_sha"].to_pylist(), light["split"].to_pylist()
    images = light["images"].to_pylist()
    # the split each row goes to, None for a copy of an example written before
    goes_to = [
        split if seen.add(bytes.fromhex(sha[:32])) else None
        for sha, split in zip(shas, splits, strict=True)
    ]
    counts.update(split for split in goes_to if split is not None)
    masks = {
        split: pa.array([to == split for to in goes_to])
        for split in sorted({to for to in goes_to if to is not None})
    }
    return masks, goes_to.count(None), images


def _with_images(
    texts: pa.Array, rows: list[list[str]], name: str, images: PartitionImages, files: _Files
) -> pa.Array:
    """A batch of one format with its images where they go: files beside the sharegpt file,
    data URLs inside openai lines; the OpenHands text only names them."""
    if not any(rows) or name == "openhands":
        return texts
    if name == "sharegpt":
        wanted = {image for names in rows for image in names}.difference(files.images)
        write_image_files(files.out / name, sorted(wanted), images)
        files.images |= wanted
        return texts
    lines = texts.to_pylist()
    inlined = [
        None if text is None else inline_images(text.encode(), names, images).decode()
        for text, names in zip(lines, rows, strict=True)
    ]
    return pa.array(inlined, texts.type)


def _copy_partition(
    lake: Lake, path: Path | str, seen: SeenContent, files: _Files, counts: Counter[str]
) -> int:
    """Append one partition's examples not seen before; returns the duplicates dropped."""
    parquet = parquet_reader(lake, path)
    # a partition may hold only some formats (`formats` run config): the others are null
    formats = [name for name in SFT_FORMATS if name in parquet.schema_arrow.names]
    dropped = 0
    stem = path.stem if isinstance(path, Path) else path.rsplit("/", 1)[-1].removesuffix(".parquet")
    images = PartitionImages(lake, stem)  # the dataset's: a partition is a dataset
    for index in range(parquet.num_row_groups):
        masks, copies, shown = _split_masks(parquet, index, seen, counts)
        dropped += copies
        for name in formats:  # the renderings are the bulk: one column, one batch at a time
            # given one row group, iter_batches reads ahead within it only, and decodes a
            # batch of pages at a time where read_row_group would decode the whole column
            batches = parquet.iter_batches(
                BATCH_ROWS, row_groups=[index], columns=[name], use_threads=False
            )
            start = 0
            for batch in batches:
                texts = batch.column(0)
                rows = shown[start : start + len(texts)]
                texts = _with_images(texts, rows, name, images, files)
                for split, mask in masks.items():
                    picked = mask.slice(start, len(texts))
                    files.write(name, split, texts.filter(picked))
                    if name == "sharegpt" and any(
                        names for names, keep in zip(rows, picked.to_pylist(), strict=True) if keep
                    ):
                        files.splits_with_images.add(split)
                start += len(texts)
    return dropped


@contextmanager
def _writing_alone(out: Path) -> Iterator[None]:
    """Holds an exclusive lock on `out` (the folder itself: no lock file among the outputs).

    Each dataset's run writes the files after its examples, and two runs may go at once. Taken
    before the partitions are listed, it makes the last writer one that started after every
    other run's examples were written, or that run writes after it: the files end up holding
    every dataset either way.
    """
    out.mkdir(parents=True, exist_ok=True)
    handle = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def write_sft_files(lake: Lake, out: Path) -> dict[str, Any]:
    """Every example of every dataset, minus exact duplicates across datasets (the first in
    partition order wins), as `<out>/<format>/<split>.jsonl` for each format some example has;
    one writer at a time.

    Returns counts per split, duplicates dropped and the files written.
    """
    with _writing_alone(out):
        return _write_sft_files(lake, out)


def publish_sft_files(lake: LakeRoot) -> dict[str, Any]:
    """`write_sft_files` for an object-store lake: written to a local folder, then published
    beside the lake (`s3://bucket/prefix/sft/...` for `s3://bucket/prefix/lake`), file by file,
    each whole. Readers may meet one file of the new set beside one of the old while it is
    published; the set is complete when the asset's materialization is."""
    with tempfile.TemporaryDirectory(prefix="bigaction-sft-") as folder:
        summary = _write_sft_files(lake, Path(folder))
        urls = lake.beside(GROUP).publish_folder(Path(folder))
    return {**summary, "files": sorted(urls[path] for path in summary["files"])}


def _write_sft_files(lake: Lake, out: Path) -> dict[str, Any]:
    partitions = table_files(lake, GROUP, "sft_examples")
    if not partitions:
        return {"examples_by_split": {}, "duplicates_dropped": 0, "files": []}
    counts: Counter[str] = Counter()
    dropped = 0
    with ExitStack() as stack, SeenContent() as seen:
        files = _Files(stack, out)
        for path in partitions:
            dropped += _copy_partition(lake, path, seen, files, counts)
        written = files.paths()
        splits = sorted(split for name, split in files.handles if name == "sharegpt")
        if splits:  # LLaMA-Factory reads the sharegpt files through it
            with_images = frozenset(f"{DATASET_PREFIX}_{s}" for s in files.splits_with_images)
            info = dataset_info(
                {f"{DATASET_PREFIX}_{s}": f"{s}.jsonl" for s in splits}, with_images
            )
            written.append(out / "sharegpt" / INFO)
            _atomic(stack, written[-1]).write(json.dumps(info, indent=2).encode() + b"\n")
    # a split, format or image that is gone (an erased sender's screenshot) must not linger
    for stale in [*out.glob("*/*.jsonl"), out / "sharegpt" / INFO]:
        if stale.exists() and stale not in written:
            stale.unlink()
    for image in (out / "sharegpt" / IMAGE_FOLDER).glob("*"):
        if image.name not in files.images:
            image.unlink()
    return {
        "examples_by_split": dict(sorted(counts.items())),
        "duplicates_dropped": dropped,
        "files": sorted(str(path) for path in written),
    }
