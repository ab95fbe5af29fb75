"""Screenshots of the SFT files: written once beside the sharegpt files, inlined in openai's.

Examples in the lake refer to an image by its path `images/<image_sha>.<format>`. LLaMA-Factory
reads that path relative to its dataset folder, so the sharegpt folder gets each image file once;
OpenAI's fine-tuning takes no file beside the JSONL, so each openai line gets the image as a data
URL in place of the path (a GIF's first frame as PNG, as OpenAI takes no GIF).
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
from PIL import Image

from bigaction_assets.durable import replace_unless_same
from bigaction_assets.images.header import sniff_format
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import open_parquet
from bigaction_assets.sft.images import IMAGE_FOLDER, image_path, openai_image_name

# Data URLs of the images met last: windows of an episode show the same screenshots.
_URLS_REMEMBERED = 64


class PartitionImages:
    """The bytes of one dataset's images by file name, read a row group at a time (the image
    hash column is read once to learn where each image is)."""

    def __init__(self, lake: Lake, dataset: str) -> None:
        self._file = open_parquet(lake, "standardized", "images", dataset)
        self._where: dict[str, tuple[int, int]] = {}
        self._urls: dict[str, bytes] = {}
        self._group: tuple[int, pa.ChunkedArray] | None = None
        if self._file is None:
            return
        for group in range(self._file.num_row_groups):
            shas = self._file.read_row_group(group, columns=["image_sha"]).column(0).to_pylist()
            for row, sha in enumerate(shas):
                self._where[sha] = (group, row)

    def read(self, name: str) -> bytes:
        """The image's bytes, as the lake holds them.

        Raises:
            KeyError: the dataset has no such image (the `image_shas_resolve` check upstream
                stops a run before that).
        """
        sha = name.split(".", 1)[0]
        if self._file is None or sha not in self._where:
            raise KeyError(f"image {name} is not in the dataset's images table")
        group, row = self._where[sha]
        if self._group is None or self._group[0] != group:  # the next image is mostly beside
            self._group = (group, self._file.read_row_group(group, columns=["bytes"]).column(0))
        return self._group[1][row].as_py()

    def read_path(self, path: str) -> bytes:
        """The bytes of the image an example names by its path (`images/<name>`)."""
        return self.read(path.rsplit("/", 1)[-1])

    def data_url(self, name: str) -> bytes:
        """`data:image/<format>;base64,...` of the image in the format `name` ends with, as
        JSON-ready bytes: the lake's bytes, or converted when the lake holds another format."""
        known = self._urls.get(name)
        if known is None:
            if len(self._urls) >= _URLS_REMEMBERED:
                self._urls.clear()
            media = name.rsplit(".", 1)[-1]
            data = self.read(name)
            if sniff_format(data) != media:
                data = _converted(data, media)
            encoded = base64.b64encode(data)
            known = self._urls[name] = b"data:image/" + media.encode() + b";base64," + encoded
        return known


def _converted(data: bytes, target: str) -> bytes:
    """The image's first frame in the format `target` (a GIF as the PNG OpenAI takes)."""
    with Image.open(io.BytesIO(data)) as image:
        frame = image.convert("RGBA" if "transparency" in image.info else "RGB")
    out = io.BytesIO()
    frame.save(out, format=target.upper())
    return out.getvalue()


def inline_images(text: bytes, names: Iterable[str], images: PartitionImages) -> bytes:
    """An openai example with each image path replaced by the image's data URL."""
    for name in dict.fromkeys(openai_image_name(name) for name in names):
        path = b'"url":"' + image_path(name).encode() + b'"'
        text = text.replace(path, b'"url":"' + images.data_url(name) + b'"')
    return text


def write_image_files(folder: Path, names: Iterable[str], images: PartitionImages) -> None:
    """Each image under `<folder>/images/`, once: a file already there holds the same bytes
    (its name is the hash of its bytes)."""
    target = folder / IMAGE_FOLDER
    for name in names:
        path = target / name
        if path.exists():
            continue
        target.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_bytes(images.read(name))
        replace_unless_same(tmp, path)
