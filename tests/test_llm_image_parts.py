"""Images in chat requests: data URLs of the exact bytes, and cache keys that follow the image."""

from __future__ import annotations

import base64
import hashlib

import pytest

from bigaction_assets.benchmark.prompts import with_screenshot
from bigaction_assets.llm.caller import prompt_sha, prompt_tokens_estimate, sha256_json
from bigaction_assets.llm.image_parts import (
    IMAGE_TOKENS_ESTIMATE,
    data_url,
    image_part,
    keyed_messages,
)

TURN_ONE = [{"role": "system", "content": "act"}, {"role": "user", "content": "Task: buy milk"}]
SHOT_A = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"a" * 40
SHOT_B = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"b" * 40


def test_the_cache_key_differs_when_only_the_image_differs():
    with_a, with_b = (
        with_screenshot(TURN_ONE, SHOT_A, "webp"),
        with_screenshot(TURN_ONE, SHOT_B, "webp"),
    )
    assert prompt_sha(with_a) != prompt_sha(with_b)
    assert prompt_sha(with_a) == prompt_sha(with_screenshot(TURN_ONE, SHOT_A, "webp"))
    assert prompt_sha(with_a) != prompt_sha(TURN_ONE)  # the image is part of the prompt


def test_the_key_holds_the_images_hash_not_its_base64():
    keyed = keyed_messages(with_screenshot(TURN_ONE, SHOT_A, "webp"))
    [part] = [p for p in keyed[-1]["content"] if p["type"] == "image_url"]
    assert part["image_url"]["url"] == "sha256:" + hashlib.sha256(SHOT_A).hexdigest()
    # text-only prompts keep the keys they always had: no cached call is asked again
    assert prompt_sha(TURN_ONE) == sha256_json(TURN_ONE)
    # a URL that is not inline data is keyed as written
    remote = [{"role": "user", "content": [{"type": "image_url",
                                            "image_url": {"url": "https://x/y.png"}}]}]  # fmt: skip
    assert keyed_messages(remote) == remote


def test_the_image_part_is_an_openai_data_url_of_the_bytes():
    part = image_part(SHOT_A, "png")
    assert part["type"] == "image_url"
    head, data = part["image_url"]["url"].split(",", 1)
    assert head == "data:image/png;base64" and base64.b64decode(data) == SHOT_A
    assert data_url(SHOT_A, "jpeg").startswith("data:image/jpeg;base64,")
    with pytest.raises(ValueError, match="bmp"):
        data_url(SHOT_A, "bmp")


def test_an_image_enters_the_budget_estimate_at_its_fixed_cost():
    text = prompt_tokens_estimate(TURN_ONE)
    shown = prompt_tokens_estimate(with_screenshot(TURN_ONE, SHOT_A, "webp"))
    # the screenshot's note is a few tokens of text; its base64 is never counted as text
    assert IMAGE_TOKENS_ESTIMATE < shown - text < IMAGE_TOKENS_ESTIMATE + 30
