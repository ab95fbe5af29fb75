"""How many tokens a rendered example takes in each format, counted as a chat model sees it.

A chat template turns each message into its text between a few framing tokens (start, role,
separator, end); JSON keys, quotes and escapes are never shown to the model. So an example's
length is the cl100k_base tokens of every text a template can show — contents, tool-call ids,
names and arguments, the tools' JSON schemas — plus a fixed overhead per message, as OpenAI
counts chat messages. Texts are counted one by one, so a page repeated across windows or
formats is tokenized once (`bigaction_assets.tokens.count_tokens` is memoized).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from bigaction_assets.sft.images import IMAGE_TOKENS, SHAREGPT_PLACEHOLDER
from bigaction_assets.tokens import count_tokens

# Start token, role, separator and end token around every message.
MESSAGE_OVERHEAD = 4
# The tokens that open the model's reply.
REPLY_OVERHEAD = 3
# Braces and field names a template may wrap around one tool call.
CALL_OVERHEAD = 4

Example = Mapping[str, Any]


def _text(value: Any) -> int:
    return count_tokens(value) if isinstance(value, str) and value else 0


def _json(value: Any) -> int:
    """Tokens of `value` as compact JSON (tool schemas)."""
    return count_tokens(orjson.dumps(value).decode()) if value else 0


def _content(value: Any, image_tokens: int) -> int:
    """A message's content: text, or parts (text parts counted, an image at its cost)."""
    if not isinstance(value, list):
        return _text(value)
    return sum(
        image_tokens if part.get("type") == "image_url" else _text(part.get("text"))
        for part in value
    )


def openai_tokens(example: Example, image_tokens: int = IMAGE_TOKENS) -> int:
    """`{"messages", "tools"}`: contents (an image part at `image_tokens`), tool calls (id,
    name, arguments), tool schemas."""
    total = REPLY_OVERHEAD + _json(example.get("tools"))
    for message in example.get("messages", []):
        total += MESSAGE_OVERHEAD + _content(message.get("content"), image_tokens)
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            total += CALL_OVERHEAD + _text(call.get("id"))
            total += _text(function.get("name")) + _text(function.get("arguments"))
        total += _text(message.get("tool_call_id"))
    return total


def _value(value: Any, image_tokens: int) -> int:
    """A sharegpt value: each image placeholder is replaced by the image's tokens."""
    if not isinstance(value, str) or SHAREGPT_PLACEHOLDER not in value:
        return _text(value)
    images = value.count(SHAREGPT_PLACEHOLDER)
    return images * image_tokens + _text(value.replace(SHAREGPT_PLACEHOLDER, ""))


def sharegpt_tokens(example: Example, image_tokens: int = IMAGE_TOKENS) -> int:
    """LLaMA-Factory sharegpt: system, the tools' JSON string, every conversation value (an
    image placeholder at `image_tokens`)."""
    total = REPLY_OVERHEAD + MESSAGE_OVERHEAD + _text(example.get("system"))
    total += _text(example.get("tools"))
    return total + sum(
        MESSAGE_OVERHEAD + _value(entry.get("value"), image_tokens)
        for entry in example.get("conversations", [])
    )


def openhands_tokens(example: Example, image_tokens: int = IMAGE_TOKENS) -> int:
    """OpenHands text: system (with the tool docs) and every conversation value; an image is
    the line that names it (`image_tokens` is taken for a like signature, not used)."""
    total = REPLY_OVERHEAD + MESSAGE_OVERHEAD + _text(example.get("system"))
    return total + sum(
        MESSAGE_OVERHEAD + _text(entry.get("value")) for entry in example.get("conversations", [])
    )


FORMAT_TOKENS: dict[str, Callable[..., int]] = {
    "openai": openai_tokens,
    "sharegpt": sharegpt_tokens,
    "openhands": openhands_tokens,
}


def example_tokens(renderings: Mapping[str, Example], image_tokens: int = IMAGE_TOKENS) -> int:
    """The longest of an example's renderings (format name -> rendered example), in tokens."""
    return max(FORMAT_TOKENS[name](example, image_tokens) for name, example in renderings.items())


# Counting an example again costs as much as making it; a check recounts the first rows of a
# partition and then one in this many, chosen by content hash, so small datasets are recounted
# whole and a systematic miscount anywhere is still caught.
RECOUNT_FIRST = 500
RECOUNT_ONE_IN = 16


def should_recount(position: int, content_sha: str) -> bool:
    """Whether a check counts the example at `position` of its partition again."""
    return position < RECOUNT_FIRST or int(content_sha[:8], 16) % RECOUNT_ONE_IN == 0


def length_problem(row: Mapping[str, Any], renderings: Mapping[str, Example]) -> str | None:
    """What is wrong with a stored example's length, counted again from its parsed renderings
    (format name -> example; a format left null was not made and is not among them): over its
    context length, or not the `tokens` it claims. None when it is right."""
    image_tokens = row.get("image_tokens")
    image_tokens = IMAGE_TOKENS if image_tokens is None else image_tokens
    counted = example_tokens(renderings, image_tokens)
    if counted > row["context_tokens"]:
        return f"{counted} tokens, over its context of {row['context_tokens']}"
    if counted != row["tokens"]:
        return f"{counted} tokens counted again, {row['tokens']} stored"
    return None
