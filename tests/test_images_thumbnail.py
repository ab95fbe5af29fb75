"""Thumbnails of screenshots in the UI's metadata: small WebP data URLs, never the full image."""

from __future__ import annotations

import base64
import io
import re

import dagster as dg
from PIL import Image

from bigaction_assets.definitions import defs
from bigaction_assets.images.thumbnail import thumbnail, thumbnail_markdown

KEY = "mind2web.train_demo"
DATA_URL = re.compile(r"\]\(data:image/webp;base64,([A-Za-z0-9+/=]+)\)")


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


def test_a_thumbnail_is_160_pixels_wide_and_keeps_the_aspect():
    with Image.open(io.BytesIO(thumbnail(png(1280, 720)))) as small:
        assert small.format == "WEBP" and small.size == (160, 90)
    with Image.open(io.BytesIO(thumbnail(png(100, 40)))) as small:
        assert small.size == (100, 40)  # never enlarged


def test_bytes_that_do_not_decode_give_a_line_not_a_failure():
    assert thumbnail_markdown(b"not an image", "x").startswith("_no preview of x")


def test_the_images_preview_shows_a_thumbnail(dagster_lake, ephemeral_instance):
    dagster_lake.add_bundled("mind2web", "train_demo", images=True)
    ephemeral_instance.add_dynamic_partitions("datasets", [KEY])
    location = defs()
    result = dg.materialize(
        [*location.assets], partition_key=KEY, instance=ephemeral_instance,
        selection=dg.AssetSelection.groups("raw", "standardized"),
        resources={"lake": dagster_lake.resource},
    )  # fmt: skip
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key.path == ["images"]
    ]
    preview = event.step_materialization_data.materialization.metadata["preview"].value
    [encoded] = DATA_URL.findall(preview)
    small = base64.b64decode(encoded)
    assert len(small) < 8_000  # the metadata stays light beside a 15-20 KB screenshot
    with Image.open(io.BytesIO(small)) as image:
        assert image.size == (160, 90)  # the demo's 1280 x 720 screenshots, scaled
