"""Small previews of stored images, for the UI's metadata: a WebP scaled to a thumbnail's width,
as a Markdown image with a data URL (a full screenshot would swell every materialization)."""

from __future__ import annotations

import base64
import io

from PIL import Image

THUMBNAIL_WIDTH = 160
WEBP_QUALITY = 60


def thumbnail(data: bytes, width: int = THUMBNAIL_WIDTH) -> bytes:
    """The image scaled to `width` pixels wide (never enlarged), as WebP bytes.

    Raises:
        PIL.UnidentifiedImageError, OSError: the bytes are not an image Pillow decodes.
    """
    with Image.open(io.BytesIO(data)) as image:
        image.seek(0)  # the first frame of an animation
        shown = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
        if shown.width > width:
            height = max(1, round(shown.height * width / shown.width))
            shown = shown.resize((width, height), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        shown.save(out, format="WEBP", quality=WEBP_QUALITY)
        return out.getvalue()


def thumbnail_markdown(data: bytes, caption: str, width: int = THUMBNAIL_WIDTH) -> str:
    """Markdown showing the image's thumbnail inline, with `caption` as its alternative text;
    a line saying why when the bytes do not decode (the `images_decode` check reports them)."""
    try:
        small = thumbnail(data, width)
    except (OSError, ValueError) as exc:
        return f"_no preview of {caption}: {type(exc).__name__}_"
    alt = caption.replace("]", "").replace("[", "")
    return f"![{alt}](data:image/webp;base64,{base64.b64encode(small).decode()})"
