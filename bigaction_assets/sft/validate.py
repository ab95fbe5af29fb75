"""Checks that a rendered example is what its consumer accepts; each returns a list of problems."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from bigaction_assets.sft.images import OPENAI_IMAGE_FORMATS, OPENAI_MAX_IMAGES
from bigaction_assets.sft.llama_factory import holds, openai_rules, sharegpt_rules
from bigaction_assets.sft.openhands_blocks import read_message
from bigaction_assets.sft.sharegpt_format import THOUGHT_WORDS

OPENAI_ROLES = ("system", "user", "assistant", "tool")


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _image_format(url: Any) -> str | None:
    """The format an image part's URL names: a data URL's media type, or a path's extension
    (the lake's form, which the training file replaces by a data URL)."""
    if not isinstance(url, str):
        return None
    if url.startswith("data:image/"):
        return url[len("data:image/") :].split(";", 1)[0]
    return url.rsplit(".", 1)[-1] if "." in url else None


def content_problems(role: Any, content: Any) -> tuple[list[str], int]:
    """OpenAI's rules on one message's content, and the images it holds: text, or for a user
    message a list of text and image parts (images in user messages only, as JPEG, PNG or
    WebP, for vision fine-tuning); an assistant message that calls may have none."""
    if isinstance(content, str) or (content is None and role == "assistant"):
        return [], 0
    if role != "user" or not isinstance(content, list):
        return [f"{role} content is not text (images go in user messages only)"], 0
    problems, images = [], 0
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            continue
        if kind != "image_url" or not isinstance(part.get("image_url"), dict):
            problems.append(f"content part {part!r:.80} is neither text nor an image")
            continue
        images += 1
        found = _image_format(part["image_url"].get("url"))
        if found not in OPENAI_IMAGE_FORMATS:
            problems.append(f"image of format {found!r}: OpenAI takes {OPENAI_IMAGE_FORMATS}")
    return problems, images


def openai_problems(example: dict[str, Any]) -> list[str]:
    """OpenAI's chat rules (roles, calls with ids and JSON-object arguments, each result
    answering a call of the assistant message before it, and each call answered unless its
    message is the last; images in user messages only, at most 64), an example that ends on
    the assistant's message, where a trainer learns, and LLaMA-Factory's rules for its
    `openai` formatting (`llama_factory.openai_rules`) on an example without images: it reads
    screenshots from the sharegpt files, and a result's screenshots follow it as a user
    message, which its openai reading would take for a misplaced turn."""
    problems: list[str] = []
    messages = example.get("messages", [])
    unanswered: set[str] = set()
    images = 0
    for position, message in enumerate(messages):
        role = message.get("role")
        if role not in OPENAI_ROLES:
            problems.append(f"message {position}: unknown role {role!r}")
        found, shown = content_problems(role, message.get("content"))
        problems += [f"message {position}: {problem}" for problem in found]
        images += shown
        if role == "tool":
            if message.get("tool_call_id") not in unanswered:
                problems.append(f"message {position}: tool_call_id answers no call before it")
            unanswered.discard(message.get("tool_call_id"))
            continue
        if unanswered:
            problems.append(f"message {position}: calls before it are not answered")
            unanswered = set()
        for call in message.get("tool_calls") or []:
            if call.get("type") != "function" or not call.get("id"):
                problems.append(f"message {position}: tool call without id or type function")
            arguments = call.get("function", {}).get("arguments")
            if not holds("object", arguments, _is_object):
                problems.append(f"message {position}: arguments are not a JSON object")
            unanswered.add(call.get("id"))
    if not messages or messages[-1].get("role") != "assistant":
        problems.append("the last message is not the assistant's: nothing to learn at the end")
    if not isinstance(example.get("tools"), list):
        problems.append("tools is not a list")
    if images > OPENAI_MAX_IMAGES:
        problems.append(f"{images} images: OpenAI takes at most {OPENAI_MAX_IMAGES} an example")
    if images:
        return problems
    return problems + [f"LLaMA-Factory: {problem}" for problem in openai_rules(example)]


def sharegpt_problems(
    example: dict[str, Any], thought_words: tuple[str, str] = THOUGHT_WORDS, ranking: bool = False
) -> list[str]:
    """LLaMA-Factory's rules (`llama_factory.sharegpt_rules`): sides alternating from the
    human's, an even count (so the last is the assistant's; odd for ranking data), function_call
    values that are calls once the thought in `thought_words` is taken out, tools as JSON."""
    return sharegpt_rules(example, thought_words, ranking)


def openhands_problems(example: dict[str, Any], parse: bool = True) -> list[str]:
    """Human and gpt alternate from the human's and end on gpt; with `parse`, every gpt message
    reads, by OpenHands' own rules (`openhands_blocks.read_message`), as a thought and at most
    one call with nothing after it. The stage passes `parse` false: it checks the calls and
    texts it renders from (`openhands_blocks.unwritable`) instead of reading its own text."""
    problems: list[str] = []
    entries = example.get("conversations", [])
    for position, entry in enumerate(entries):
        expected = "human" if position % 2 == 0 else "gpt"
        if entry.get("from") != expected:
            problems.append(f"message {position}: {entry.get('from')!r}, expected {expected!r}")
        if parse and entry.get("from") == "gpt":
            try:
                read_message(entry.get("value", ""))
            except ValueError as exc:
                problems.append(f"message {position}: {exc}")
    if not entries or entries[-1].get("from") != "gpt":
        problems.append("the last message is not gpt's: nothing to learn at the end")
    return problems


PROBLEM_FINDERS = {
    "openai": openai_problems,
    "sharegpt": sharegpt_problems,
    "openhands": openhands_problems,
}


def rendering_problems(
    renderings: dict[str, dict[str, Any]], parse_blocks: bool = True
) -> list[str]:
    """Problems of one example's renderings (format name -> example), prefixed by format.

    The stage passes `parse_blocks=False`: it renders OpenHands blocks from calls it has
    checked (`openhands_blocks.unwritable`), so it does not parse its own text back; the
    blocking check, reading the stored text, parses every block.
    """
    return [
        f"{name}: {problem}"
        for name, example in renderings.items()
        for problem in (
            openhands_problems(example, parse=parse_blocks)
            if name == "openhands"
            else PROBLEM_FINDERS[name](example)
        )
    ]


def parsed_renderings(renderings: Mapping[str, str | bytes | None]) -> dict[str, dict[str, Any]]:
    """Stored renderings (format name -> JSON text, None for a format not made) parsed."""
    return {name: orjson.loads(text) for name, text in renderings.items() if text is not None}
