"""The turns of a rendered SFT example, read back from each format, to compare the formats."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from bigaction_assets.sft.openhands_blocks import parameter_text, read_message
from bigaction_assets.sft.sharegpt_format import THOUGHT_WORDS

# (side, text, calls): side is `user`, `result` (a tool result), `call` or `reply`; text is a
# user-side message's text, or an assistant's text besides its calls (its thought, stripped as
# OpenHands strips it); calls are (name, {key: the value's text, stripped as OpenHands does}).
Turn = tuple[str, str, list[tuple[str, dict[str, str]]]]
ASSISTANT_SIDES = ("call", "reply")


def _call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
    return name, {key: parameter_text(value).strip() for key, value in arguments.items()}


def _shown(images: list[str], text: str) -> str:
    """A user-side turn's text with its images after it, in order: where a format puts an image
    differs (OpenAI takes none in a result, so a result's come after it), which images and in
    what order must not."""
    return text + "".join(f"\n<image {path}>" for path in images)


# our placeholder names a lake image; an image the lake lacks keeps the text `[Image: <its path>]`
IMAGE_LINE = re.compile(r"\[Image: (images/[0-9a-f]{64}\.\w+)\](?:\n|$)")


def _openhands_shown(value: str) -> str:
    """An OpenHands human value with its image lines taken out and listed after it."""
    return _shown(IMAGE_LINE.findall(value), IMAGE_LINE.sub("", value))


def _path(url: str) -> str:
    """An image URL as the path the other formats name it by: a data URL (the training files')
    by the sha256 of its bytes, so a compare also checks the bytes are the named image's."""
    if not url.startswith("data:image/"):
        return url
    media, data = url.removeprefix("data:image/").split(";base64,", 1)
    return f"images/{hashlib.sha256(base64.b64decode(data)).hexdigest()}.{media}"


def _parts(content: Any) -> tuple[list[str], str]:
    """(image paths, text) of an openai content: text, or parts."""
    if not isinstance(content, list):
        return [], content or ""
    urls = [_path(part["image_url"]["url"]) for part in content if part["type"] == "image_url"]
    return urls, "\n\n".join(part["text"] for part in content if part["type"] == "text")


def openai_turns(example: dict[str, Any]) -> list[Turn]:
    turns: list[Turn] = []
    for message in example["messages"][1:]:
        role, content = message["role"], message.get("content") or ""
        if role == "user" and isinstance(content, list):
            urls, text = _parts(content)
            if turns and turns[-1][0] == "result" and not text:  # a result's screenshots
                side, shown, calls = turns.pop()
                turns.append((side, _shown(urls, shown), calls))
                continue
            content = _shown(urls, text)
        calls = [
            _call(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or []
        ]
        if role == "assistant":
            turns.append(("call" if calls else "reply", content.strip(), calls))
        else:
            turns.append(({"user": "user", "tool": "result"}[role], content, []))
    return turns


def sharegpt_turns(example: dict[str, Any]) -> list[Turn]:
    opening, closing = THOUGHT_WORDS
    turns: list[Turn] = []
    images = iter(example.get("images", []))
    for entry in example["conversations"]:
        role, value = entry["from"], entry["value"]
        shown = []
        while value.startswith("<image>"):
            shown.append(next(images))
            value = value[len("<image>") :]
        value = _shown(shown, value) if shown else value
        if role == "gpt":
            turns.append(("reply", value.strip(), []))
        elif role != "function_call":
            turns.append(({"human": "user", "observation": "result"}[role], value, []))
        else:
            thought = ""
            if value.startswith(opening):
                thought, value = value[len(opening) :].split(closing, 1)
            read = json.loads(value)
            calls = [
                _call(c["name"], c["arguments"])
                for c in (read if isinstance(read, list) else [read])
            ]
            turns.append(("call", thought.strip(), calls))
    return turns


def openhands_turns(example: dict[str, Any]) -> list[Turn]:
    """Turns as OpenHands reads them: a tool result is a human message under its header."""
    turns: list[Turn] = []
    for entry in example["conversations"]:
        if entry["from"] == "human":
            turns.append(("user", _openhands_shown(entry["value"]), []))
            continue
        thought, call = read_message(entry["value"])
        turns.append(("call", thought, [call]) if call else ("reply", thought, []))
    return turns


def disagreements(renderings: dict[str, dict[str, Any]]) -> list[str]:
    """Where the formats of one example disagree on its turns (empty when they agree)."""
    openai = openai_turns(renderings["openai"])
    problems = []
    if sharegpt_turns(renderings["sharegpt"]) != openai:
        problems.append("sharegpt's turns are not openai's")
    expected: list[Turn] = []
    called = None
    for side, text, calls in openai:
        if side == "result":
            expected.append(("user", f"EXECUTION RESULT of [{called}]:\n{text}", []))
        else:
            expected.append((side, text, calls))
        called = calls[-1][0] if calls else called
    if openhands_turns(renderings["openhands"]) != expected:
        problems.append("openhands' turns are not openai's")
    return problems
