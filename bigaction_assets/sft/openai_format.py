"""OpenAI chat format: `{"messages": [...], "tools": [...]}` with tool calls and tool results."""

from __future__ import annotations

from typing import Any

from bigaction_assets.sft.images import openai_image_part, run_images
from bigaction_assets.sft.tools import openai_tools
from bigaction_assets.sft.turns import Conversation, Turn, assistant_text_and_calls


def _assistant(group: list[Turn]) -> dict[str, Any]:
    text, calls = assistant_text_and_calls(group)
    if not calls:
        return {"role": "assistant", "content": text}
    return {
        "role": "assistant",
        "content": text or None,  # the thought, if the source recorded one
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json},
            }
            for call in calls
        ],
    }


def _user_side(group: list[Turn]) -> list[dict[str, Any]]:
    """One message for a run of the user's side: the result of the call before it, with what
    follows it (LLaMA-Factory refuses a user message right after a tool result), or user text.

    Its screenshots come first, as image parts. OpenAI takes images in user messages only: a
    result that shows some is followed by a user message holding them.
    """
    first = group[0]
    text = first.content if len(group) == 1 else "\n\n".join(turn.content for turn in group)
    images = [openai_image_part(name) for name in run_images(group)]
    if first.role == "tool":
        result = {"role": "tool", "tool_call_id": first.tool_call_id, "content": text}
        return [result, {"role": "user", "content": images}] if images else [result]
    if images:
        return [{"role": "user", "content": [*images, {"type": "text", "text": text}]}]
    return [{"role": "user", "content": text}]


def render_openai(conversation: Conversation) -> dict[str, Any]:
    """One training example in OpenAI's fine-tuning format."""
    messages = [{"role": "system", "content": conversation.system}]
    for group in conversation.groups:
        if group[0].role == "assistant":
            messages.append(_assistant(group))
        else:
            messages += _user_side(group)
    return {
        "messages": messages,
        "tools": openai_tools(conversation.tools),
    }
