"""OpenHands text format: `<function=NAME><parameter=K>V</parameter></function>` blocks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bigaction_assets.sft.images import openhands_parts
from bigaction_assets.sft.openhands_blocks import block_text
from bigaction_assets.sft.tools import ToolSpec, once_per_tool_set, tool_set_key
from bigaction_assets.sft.turns import Conversation, ToolCall, Turn

CALL_FORMAT = (
    "To call a function, reply with your reasoning, then exactly one block:\n"
    "<function=NAME>\n<parameter=NAME>\nVALUE\n</parameter>\n</function>\n"
    "Non-string values are written as JSON."
)


def function_block(call: ToolCall) -> str:
    """The call as an OpenHands block; made once per call (every window shows it), kept on
    the call the way `cached_property` keeps a value."""
    known = call.__dict__.get("_openhands_block")
    if known is None:
        known = call.__dict__["_openhands_block"] = block_text(call.name, call.arguments)
    return known


def typed_arguments(parameters: dict[str, str], spec: ToolSpec | None) -> dict[str, Any]:
    """Parameter texts back to values, reading JSON where the spec declares a non-string."""
    arguments: dict[str, Any] = {}
    for key, text in parameters.items():
        declared = spec.parameter_type(key) if spec is not None else None
        if declared is None or declared == "string":
            arguments[key] = text
            continue
        try:
            arguments[key] = json.loads(text)
        except json.JSONDecodeError:
            arguments[key] = text
    return arguments


def tool_documentation(tools: Sequence[ToolSpec]) -> str:
    """Compact docs of the tools, one signature and description per line."""
    return "\n".join(["You can call these functions:", *map(_tool_line, tools)])


# A registry spec documents the same way in every episode: its line is kept with it.
def _tool_line(spec: ToolSpec) -> str:
    known = spec.__dict__.get("_openhands_line")
    if known is None:
        params = ", ".join(
            f"{key}: {_type_name(schema)}{'' if key in spec.required else ' (optional)'}"
            for key, schema in spec.properties.items()
        )
        known = spec.__dict__["_openhands_line"] = f"- {spec.name}({params}): {spec.description}"
    return known


def _type_name(schema: dict[str, Any]) -> str:
    declared = schema.get("type", "any")
    return " | ".join(declared) if isinstance(declared, list) else str(declared)


# Most episodes of a dataset offer the same tools: their system text is made once per tool set.
_system_texts: dict[tuple[str, tuple[str, ...]], str] = {}


def system_text(conversation: Conversation) -> str:
    """The system message: the prompt, the tool docs and how to call them."""
    system, tools = conversation.system, conversation.tools
    return once_per_tool_set(
        _system_texts,
        (system, tool_set_key(tools)),
        lambda: "\n\n".join((system, tool_documentation(tools), CALL_FORMAT)),
    )


def result_header(turn: Turn) -> str:
    """The line above a tool result: which function's output the user is shown."""
    return f"EXECUTION RESULT of [{turn.name}]:"


def render_openhands(conversation: Conversation) -> dict[str, Any]:
    """One example in the OpenHands text form: `{id, system, conversations[human|gpt]}`."""
    entries: list[dict[str, str]] = []
    for turn in conversation.turns:
        if turn.role == "assistant":
            parts = [turn.content] if turn.content else []
            parts += [function_block(call) for call in turn.tool_calls]
            value, role = "\n\n".join(parts), "gpt"
        elif turn.role == "tool":
            value, role = "\n".join([result_header(turn), *openhands_parts(turn)]), "human"
        else:
            value, role = "\n".join(openhands_parts(turn)), "human"
        if entries and entries[-1]["from"] == role:
            entries[-1]["value"] += f"\n\n{value}"
        else:
            entries.append({"from": role, "value": value})
    system = system_text(conversation)
    example_id = conversation.episode_id
    if conversation.windows > 1:  # windows of one episode are separate examples
        example_id = f"{example_id}#{conversation.window}"
    return {"id": example_id, "system": system, "conversations": entries}
