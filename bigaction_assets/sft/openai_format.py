"""OpenAI chat format: `{"messages": [...], "tools": [...]}` with tool calls and tool results."""

from __future__ import annotations

from typing import Any

from bigaction_assets.sft.conversation import Conversation, Turn


def _message(turn: Turn) -> dict[str, Any]:
    if turn.role == "assistant" and turn.tool_calls:
        return {
            "role": "assistant",
            "content": turn.content or None,  # the thought, if the source recorded one
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for call in turn.tool_calls
            ],
        }
    if turn.role == "tool":
        return {"role": "tool", "tool_call_id": turn.tool_call_id, "content": turn.content}
    return {"role": turn.role, "content": turn.content}


def render_openai(conversation: Conversation) -> dict[str, Any]:
    """One training example in OpenAI's fine-tuning format."""
    messages = [{"role": "system", "content": conversation.system}]
    messages.extend(_message(turn) for turn in conversation.turns)
    return {
        "messages": messages,
        "tools": [spec.as_openai_tool() for spec in conversation.tools],
    }
