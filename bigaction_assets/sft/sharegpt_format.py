"""LLaMA-Factory sharegpt format (human/gpt/function_call/observation) and its dataset_info."""

from __future__ import annotations

from typing import Any

from bigaction_assets.sft.images import SHAREGPT_PLACEHOLDER, image_path, run_images
from bigaction_assets.sft.tools import once_per_tool_set, tool_set_key
from bigaction_assets.sft.turns import Conversation, Turn, assistant_text_and_calls

HUMAN_SIDE = ("human", "observation")  # LLaMA-Factory wants these at positions 0, 2, 4, ...
GPT_SIDE = ("gpt", "function_call")  # ... and these at 1, 3, 5, ...
TAGS = {
    "role_tag": "from",
    "content_tag": "value",
    "user_tag": "human",
    "assistant_tag": "gpt",
    "observation_tag": "observation",
    "function_tag": "function_call",
    "system_tag": "system",
}
# LLaMA-Factory's default thought words (src/llamafactory/data/template.py, register_template):
# its FunctionFormatter (formatter.py) takes the first text between them out of a function_call
# value, reads the rest as the calls, and puts the thought back before the formatted calls.
# Templates that set no words of their own use these; templates of older releases used
# "<think>" and "</think>", which find the same thought in this text.
THOUGHT_WORDS = ("<think>\n", "\n</think>\n\n")


def _human_entry(group: list[Turn]) -> dict[str, str]:
    """The run's text after a placeholder per screenshot it shows."""
    role = "observation" if group[0].role == "tool" else "human"
    value = group[0].content if len(group) == 1 else "\n\n".join(t.content for t in group)
    images = run_images(group)
    if images:
        value = SHAREGPT_PLACEHOLDER * len(images) + value
    return {"from": role, "value": value}


def with_thought(thought: str, calls: str, thought_words: tuple[str, str] = THOUGHT_WORDS) -> str:
    """A function_call value: the calls' JSON, after the thought in `thought_words` if any."""
    return f"{thought_words[0]}{thought}{thought_words[1]}{calls}" if thought else calls


def _gpt_entry(group: list[Turn], thought_words: tuple[str, str]) -> dict[str, str]:
    text, calls = assistant_text_and_calls(group)
    if not calls:
        return {"from": "gpt", "value": text}
    payload = [call.call_json for call in calls]
    value = payload[0] if len(payload) == 1 else f"[{', '.join(payload)}]"
    return {"from": "function_call", "value": with_thought(text, value, thought_words)}


def render_sharegpt(
    conversation: Conversation, thought_words: tuple[str, str] = THOUGHT_WORDS
) -> dict[str, Any]:
    """One example in LLaMA-Factory's sharegpt form: one entry per run of turns of a side.

    Args:
        conversation: The episode's turns.
        thought_words: What wraps the thought before a function_call's JSON, as the template
            that will read it expects (LLaMA-Factory's default by default).
    """
    entries = [
        _gpt_entry(group, thought_words) if group[0].role == "assistant" else _human_entry(group)
        for group in conversation.groups
    ]
    example = {
        "conversations": entries,
        "system": conversation.system,
        "tools": tools_json(conversation),
    }
    images = run_images(conversation.turns)
    if images:  # in the order of the placeholders, as LLaMA-Factory pairs them
        example["images"] = [image_path(name) for name in images]
    return example


_tools_json: dict[tuple[str, ...], str] = {}


def tools_json(conversation: Conversation) -> str:
    """The `tools` field: the functions as a JSON list in a string, as LLaMA-Factory reads it.
    Made once per tool set, so the count of every example's copy finds its hash made too."""
    # json.dumps of the list, from each spec's JSON made once: the same text, joined by ", "
    key = tool_set_key(conversation.tools)
    return once_per_tool_set(_tools_json, key, lambda: f"[{', '.join(key)}]")


def dataset_entry(source: dict[str, str], images: bool = False) -> dict[str, Any]:
    """One `dataset_info.json` entry for LLaMA-Factory; `source` says where the data is
    (`file_name`, or `hf_hub_url` with `subset` and `split`); `images` when its examples show
    screenshots (their `images` column, paths relative to the file's folder)."""
    columns = {"messages": "conversations", "system": "system", "tools": "tools"}
    if images:
        columns["images"] = "images"
    return {**source, "formatting": "sharegpt", "columns": columns, "tags": dict(TAGS)}


def dataset_info(
    file_names: dict[str, str], with_images: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """`dataset_info.json` entries for LLaMA-Factory, one per dataset name -> file name; the
    names in `with_images` read an `images` column."""
    return {
        name: dataset_entry({"file_name": file_name}, images=name in with_images)
        for name, file_name in sorted(file_names.items())
    }
