"""Images in chat messages: OpenAI-compatible `image_url` parts as data URLs, and the form of a
prompt the call cache keys on, where each image stands as the sha256 of its bytes."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

# MIME types of the formats the `images` table holds (images/header.py's names)
MIME_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}
# Tokens a budget reserves for one image before the server says what it cost: OpenAI's count
# for a 1280 x 720 screenshot at high detail (85 + 170 per 512-pixel tile, 6 tiles). It only
# sizes the reservation; the server's own count replaces it once the call ends.
IMAGE_TOKENS_ESTIMATE = 1105
KEY_PREFIX = "sha256:"


def data_url(data: bytes, image_format: str) -> str:
    """`data:<mime>;base64,...` of an image's bytes, as chat servers take inline images."""
    if image_format not in MIME_TYPES:
        raise ValueError(f"no MIME type for image format {image_format!r}")
    return f"data:{MIME_TYPES[image_format]};base64,{base64.b64encode(data).decode()}"


def image_part(data: bytes, image_format: str) -> dict[str, Any]:
    """One image as a content part of a user message."""
    return {"type": "image_url", "image_url": {"url": data_url(data, image_format)}}


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _url_key(url: str) -> str:
    """A data URL as the sha256 of its decoded bytes (the lake's image_sha for the same image);
    any other URL as it is."""
    if not url.startswith("data:") or ";base64," not in url:
        return url
    try:
        data = base64.b64decode(url.split(";base64,", 1)[1], validate=True)
    except binascii.Error:
        return url  # not base64 after all: the text itself is what was sent
    return KEY_PREFIX + hashlib.sha256(data).hexdigest()


def keyed_content(content: Any) -> Any:
    """Message content with every inline image replaced by its hash: a key that changes when
    any image's bytes change, without hashing megabytes of base64 into the cache's key text."""
    if not isinstance(content, list):
        return content
    keyed = []
    for part in content:
        url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
        if isinstance(url, str):
            part = {**part, "image_url": {**part["image_url"], "url": _url_key(url)}}
        keyed.append(part)
    return keyed


def keyed_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages the cache keys on: text as it is, images by the sha256 of their bytes.
    Text-only messages come back equal, so their keys are the keys they always had."""
    return [
        {**message, "content": keyed_content(message["content"])}
        if isinstance(message.get("content"), list)
        else message
        for message in messages
    ]


def content_text(content: Any) -> str:
    """The text of a message's content: the string itself, or its text parts joined."""
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text") or "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return str(content or "")


def image_count(content: Any) -> int:
    if not isinstance(content, list):
        return 0
    return sum(1 for part in content if isinstance(part, dict) and part.get("type") == "image_url")
