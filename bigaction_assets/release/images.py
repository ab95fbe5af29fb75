"""The release's `images` config: every stored image of the released datasets as a Hugging Face
`Image` feature, so `datasets.load_dataset` returns decoded images and the Hub's viewer shows
them; events point at them by `image_sha` (and `answer_image_sha`, the-wave's marked answer).

An `Image` column is an Arrow struct `{bytes: binary, path: string}`; what makes it an image
and not a struct is the feature description `datasets` reads from the Parquet schema's
`huggingface` metadata (the card's `dataset_info` repeats it for the Hub). The bytes are the
lake's, exactly as landed: nothing is decoded or re-encoded on the way.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa

from bigaction_assets.images.store import ASSET, GROUP
from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import iter_row_groups
from bigaction_assets.release.parts import Parts, PartTally
from bigaction_assets.release.shards import HF_METADATA_KEY, ParquetShardWriter, pieces
from bigaction_assets.release.tally import Tally

CONFIG = "images"
SLICE_BYTES = 2**30  # an Arrow binary array holds under 2 GB; a row group may hold more
SPLIT = "train"
IMAGE_STRUCT = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
COLUMNS: list[tuple[str, pa.DataType, dict[str, Any]]] = [
    ("image_sha", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("format", pa.string(), {"dtype": "string", "_type": "Value"}),
    ("width", pa.int32(), {"dtype": "int32", "_type": "Value"}),
    ("height", pa.int32(), {"dtype": "int32", "_type": "Value"}),
    ("byte_size", pa.int64(), {"dtype": "int64", "_type": "Value"}),
    ("image", IMAGE_STRUCT, {"_type": "Image"}),
]
FEATURES = {name: feature for name, _, feature in COLUMNS}
# PNG, JPEG and WebP are compressed already: zstd on their bytes costs CPU and saves nothing
COMPRESSION = {
    **{name: "zstd" for name, _, _ in COLUMNS[:-1]},
    "image.bytes": "none",
    "image.path": "zstd",
}


def images_schema() -> pa.Schema:
    """The config's Arrow schema, with the `Image` feature in its `huggingface` metadata."""
    metadata = {HF_METADATA_KEY: json.dumps({"info": {"features": FEATURES}}).encode()}
    return pa.schema([pa.field(name, kind) for name, kind, _ in COLUMNS], metadata=metadata)


def _as_release_rows(table: pa.Table) -> pa.Table:
    """Lake rows of `images` as the config's columns: the bytes and a file name in `image`."""
    shas, formats = table["image_sha"].to_pylist(), table["format"].to_pylist()
    names = [f"{sha}.{fmt}" for sha, fmt in zip(shas, formats, strict=True)]
    # the lake's large_binary as the `Image` struct's binary (slices stay far below 2 GB)
    data = table["bytes"].combine_chunks().cast(pa.binary())
    image = pa.StructArray.from_arrays(
        [data, pa.array(names, pa.string())], fields=list(IMAGE_STRUCT)
    )
    columns = [table[name] for name, _, _ in COLUMNS[:-1]]
    return pa.table([*columns, image], schema=images_schema())


def write_images(
    lake: Lake, data: Path, datasets: list[str], max_bytes: int, tally: Tally,
    sources: dict[str, str], parts: Parts,
) -> dict[str, Any]:  # fmt: skip
    """Writes `data/images/<partition>/train-*.parquet` for each dataset with images, a row
    group at a time (or keeps them from the release before, `parts`), counting rows per source
    (`sources` maps dataset to source) in `tally`. Returns the card's summary: images, bytes,
    and images by format."""
    by_source: Counter[str] = Counter()
    formats: Counter[str] = Counter()
    total_bytes = 0
    for dataset in datasets:
        if not partition_exists(lake, GROUP, ASSET, dataset):
            continue
        name = f"{CONFIG}/{dataset}"
        key = parts.key(name, [(GROUP, ASSET, dataset)])
        made = parts.keep(name, key, tally)  # counted below, by the source of today's episodes
        if made is None:
            made = _write_partition(lake, data / CONFIG / dataset, dataset, max_bytes)
            parts.record(name, key, [f"{data.name}/{CONFIG}/{dataset}"], PartTally(tally), made)
        if made["rows"]:
            by_source[sources.get(dataset, dataset)] += made["rows"]
        formats.update(dict(made["formats"]))
        total_bytes += made["bytes"]
    for source, rows in sorted(by_source.items()):
        tally.add(CONFIG, SPLIT, source, rows)
        tally.add_rows(CONFIG, SPLIT, rows)
    return {"images": sum(formats.values()), "bytes": total_bytes, "by_format": dict(formats)}


def _write_partition(lake: Lake, folder: Path, dataset: str, max_bytes: int) -> dict[str, Any]:
    """One dataset's images as the config's shards in `folder`: their rows, formats (in the
    order first seen) and bytes."""
    writer = ParquetShardWriter(folder, SPLIT, images_schema(), max_bytes, COMPRESSION)
    formats: Counter[str] = Counter()
    total_bytes = 0
    for group in iter_row_groups(lake, GROUP, ASSET, dataset):
        for table in pieces(group, min(max_bytes, SLICE_BYTES)):
            writer.write(_as_release_rows(table))
            formats.update(table["format"].to_pylist())
            total_bytes += sum(table["byte_size"].to_pylist())
    writer.close()
    return {"rows": writer.rows, "formats": list(formats.items()), "bytes": total_bytes}
