"""How an example refers to the screenshots it shows, in each SFT format."""

from __future__ import annotations

from bigaction_assets.sft.turns import Turn

# Relative to the folder of the example's file: `sft_files` writes each image there once.
IMAGE_FOLDER = "images"
# LLaMA-Factory's image placeholder (IMAGE_PLACEHOLDER, `<image>` unless its environment says
# otherwise): one per entry of the example's `images`, in order, across the messages.
SHAREGPT_PLACEHOLDER = "<image>"
# A screenshot's cost in the token budget, for the formats that carry it: GPT-4o's high-detail
# price of a 1280x720 screenshot (6 tiles of 170 tokens, plus 85); Qwen2-VL sees ~1,150.
IMAGE_TOKENS = 1_105
# OpenAI's fine-tuning takes these image formats, and at most this many images an example;
# an image of another format (a GIF) reaches it converted to PNG (its first frame).
OPENAI_IMAGE_FORMATS = ("png", "jpeg", "webp")
OPENAI_CONVERTED_FORMAT = "png"
OPENAI_MAX_IMAGES = 64


def image_path(name: str) -> str:
    """Where an example finds the image, relative to its file's folder."""
    return f"{IMAGE_FOLDER}/{name}"


def run_images(group: list[Turn]) -> list[str]:
    """The images of a run of turns, in order (a run is one message in every format)."""
    return [name for turn in group for name in turn.images]


def openhands_placeholder(name: str) -> str:
    """The text form's stand-in for an image it cannot carry: a line naming the file."""
    return f"[Image: {image_path(name)}]"


def openhands_parts(turn: Turn) -> list[str]:
    """An observation's text in the OpenHands form: a line per image, then its text."""
    parts = [openhands_placeholder(name) for name in turn.images]
    return [*parts, turn.content] if turn.content or not parts else parts


def openai_image_name(name: str) -> str:
    """The file name an openai example gives the image `name`: the same for a format OpenAI
    takes, else the PNG it is converted to (`<sha>.png`)."""
    sha, _, image_format = name.rpartition(".")
    return name if image_format in OPENAI_IMAGE_FORMATS else f"{sha}.{OPENAI_CONVERTED_FORMAT}"


def openai_image_part(name: str) -> dict[str, object]:
    """An image content part; the lake holds the image's path, which `sft_files` replaces by
    a data URL of its bytes (converted to PNG for a format OpenAI does not take)."""
    return {"type": "image_url", "image_url": {"url": image_path(openai_image_name(name))}}
