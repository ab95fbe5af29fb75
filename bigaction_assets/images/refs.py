"""Where an event's image is, as a source adapter names it, and where a dataset keeps its images.

An adapter never reads an image: it says where one is (a path, a screenshot named after a step,
data inline in the record, a cell of a Parquet landing file, or none where one belongs), and the
spine's `ImageResolver` fetches the bytes, so every source's images go through one reader, one
set of limits and one set of reasons.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from bigaction_assets.shard_keys import dataset_of

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif")
IMAGES_FOLDER = ".images"  # `<adapter>/<dataset>.images/` beside a dataset holds its images
# How base64 of each format's signature begins: ADP's OpenHands sample keeps its screenshots
# inline as bare base64 of the PNG, where other datasets name a file.
_INLINE_STARTS = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR")
_DATA_URL = re.compile(r"^data:image/[a-z+.-]+;base64,", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # a URL, or a Windows drive letter


@dataclass(frozen=True, slots=True)
class LandingImage:
    """A file the source names by path, looked up in the dataset's image folders."""

    path: str


@dataclass(frozen=True, slots=True)
class NamedScreenshot:
    """The screenshot of a step named after it (`<stem>.png`, `.webp`, ...), for sources whose
    records carry none (Mind2Web's task files: screenshots named by `action_uid`). Expected
    only when the dataset has an image folder."""

    stem: str


@dataclass(frozen=True, slots=True)
class InlineImage:
    """Bytes the record itself holds (base64 or a data URL, decoded)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class ParquetImage:
    """A binary cell of a Parquet landing file: row `row` (from 0) of `column`, whose sha256
    and size the raw record kept (`sources.parquet_rows.binary_reference`)."""

    file: str
    row: int
    column: str
    sha256: str | None
    size: int | None


@dataclass(frozen=True, slots=True)
class NoImage:
    """An image belongs here but the source gives none (a Multimodal-Mind2Web row with an
    empty screenshot), or gives something that cannot be one."""

    reason: str
    detail: str


ImageRef = LandingImage | NamedScreenshot | InlineImage | ParquetImage | NoImage


def inline_data(text: str) -> bytes | NoImage | None:
    """The bytes of an image given inline (a data URL, or bare base64 of a PNG, JPEG, GIF or
    WebP), None if the text is not inline data, or why it does not decode."""
    found = _DATA_URL.match(text)
    if found is None and not (len(text) > 64 and text.startswith(_INLINE_STARTS)):
        return None
    payload = text[found.end() :] if found else text
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        return NoImage("undecodable", f"inline base64 does not decode: {exc}")


def image_ref(text: str | None) -> ImageRef | None:
    """An image an ADP-style record gives as text: inline data, else a path."""
    if text is None or not text.strip():
        return None
    inline = inline_data(text)
    if isinstance(inline, NoImage):
        return inline
    return InlineImage(inline) if inline is not None else LandingImage(text)


def safe_relative(path: str) -> PurePosixPath | None:
    """The path as one relative to an image folder, or None when it is absolute, a URL or
    climbs out (`..`): such a path names a file on its author's machine, never ours to read."""
    if not path or "\x00" in path or _SCHEME.match(path):
        return None
    relative = PurePosixPath(path.replace("\\", "/"))
    if relative.is_absolute() or ".." in relative.parts:
        return None
    return relative


def image_folders(adapter_folder: Path, dataset: str) -> list[Path]:
    """Where a dataset's images are, in lookup order: the dataset's own folder (a dataset
    landed as a folder) and the folder `<dataset>.images` beside it; a shard's are its
    dataset's (`dataset` may be a shard's name)."""
    dataset = dataset_of(dataset)
    folders = [adapter_folder / dataset, adapter_folder / f"{dataset}{IMAGES_FOLDER}"]
    return [folder for folder in folders if folder.is_dir()]


def image_files(adapter_folder: Path, dataset: str) -> list[Path]:
    """Every image file in the dataset's image folders: inputs of the dataset as much as its
    records are (a changed screenshot rebuilds it)."""
    return sorted(
        path
        for folder in image_folders(adapter_folder, dataset)
        for path in folder.rglob("*")
        if path.is_file()
        and path.suffix.lower() in IMAGE_SUFFIXES
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
