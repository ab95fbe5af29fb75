"""Table-wide invariants of `images`: every referenced image is stored, and every stored image's
bytes are what its row says (hash, size, header) and decode to its dimensions."""

from __future__ import annotations

import hashlib
import io
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb
from PIL import Image

from bigaction_assets.images.header import ImageRefused, inspect
from bigaction_assets.images.store import iter_images
from bigaction_assets.lake import Lake
from bigaction_assets.quality import has_table, relation

# Pillow's names of the formats the header reader tells apart
PILLOW_FORMATS = {"PNG": "png", "JPEG": "jpeg", "MPO": "jpeg", "WEBP": "webp", "GIF": "gif"}


def unresolved_image_shas(
    con: duckdb.DuckDBPyConnection, lake: Path, limit: int = 20, partition: str | None = None
) -> list[dict[str, Any]]:
    """Events whose image_sha or answer_image_sha has no row in `images` (of their own
    partition, when one is named: a dataset stores every image its events show)."""
    images = (
        f"(select image_sha from {relation(lake, 'images', partition=partition)})"
        if has_table(lake, "images", partition=partition)
        else "(select null::varchar as image_sha where false)"
    )
    cursor = con.execute(
        f"""
        select ev.episode_id, ev.idx, k.sha as image_sha
        from {relation(lake, "events", partition=partition)} ev,
             unnest([ev.image_sha, ev.answer_image_sha]) as k(sha)
        where k.sha is not null and k.sha not in {images}
        order by 1, 2 limit {limit}"""
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def decode_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with one stored image (its row with `bytes`), or None."""
    data = row["bytes"]
    if hashlib.sha256(data).hexdigest() != row["image_sha"]:
        return "the bytes do not hash to image_sha"
    if len(data) != row["byte_size"]:
        return f"byte_size says {row['byte_size']}, the bytes are {len(data)}"
    try:
        header = inspect(data)
    except ImageRefused as refused:
        return f"the header is refused: {refused.detail}"
    stated = (row["format"], row["width"], row["height"])
    if (header.format, header.width, header.height) != stated:
        return f"the header says {header}, the row {stated}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image.load()  # decodes every pixel: a cut or damaged body fails here
                decoded = (PILLOW_FORMATS.get(image.format or ""), *image.size)
    except Exception as exc:  # Pillow raises many kinds for a damaged file; each is a finding
        return f"Pillow cannot decode it: {type(exc).__name__}: {exc}"
    if decoded != stated:
        return f"decoded as {decoded}, the row says {stated}"
    return None


def sampled(sha: str, share: float) -> bool:
    """Whether the image is in a deterministic `share` of all images (by its hash)."""
    return share >= 1 or int(sha[:8], 16) < share * 0x1_0000_0000


def undecodable_images(
    lake: Lake, share: float = 1.0, limit: int = 20, partitions: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """Stored images (of a `share` of hashes; all by default) whose bytes are not what their
    row says or do not decode, with why; of the `partitions` named (all by default); read one
    row group at a time."""
    found = []
    for row in iter_images(lake, partitions=partitions):
        if not sampled(row["image_sha"], share):
            continue
        problem = decode_problem(row)
        if problem is not None:
            found.append({"image_sha": row["image_sha"], "location": row["location"],
                          "problem": problem})  # fmt: skip
            if len(found) >= limit:
                break
    return found
