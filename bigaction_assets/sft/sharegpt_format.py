"""LLaMA-Factory sharegpt format (human/gpt/function_call/observation) and its dataset_info."""

from __future__ import annotations

from typing import Any

from bigaction_assets.sft.conversation import Conversation, Turn

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
MISSING_USER_TURN = "[no user message recorded]"


def _group_by_side(turns: list[Turn]) -> list[list[Turn]]:
    groups: list[list[Turn]] = []
    for turn in turns:
        is_assistant = turn.role == "assistant"
        if groups and (groups[-1][0].role == "assistant") == is_assistant:
            groups[-1].append(turn)
        else:
            groups.append([turn])
    return groups


def _human_entry(group: list[Turn]) -> dict[str, str]:
    role = "observation" if all(turn.role == "tool" for turn in group) else "human"
    return {"from": role, "value": "\n\n".join(turn.content for turn in group)}


def _gpt_entry(group: list[Turn], thought_words: tuple[str, str] | None) -> dict[str, str]:
    text = "\n\n".join(turn.content for turn in group if turn.content)
    calls = [call for turn in group for call in turn.tool_calls]
    if not calls:
        return {"from": "gpt", "value": text}
    payload = [call.call_json for call in calls]
    value = payload[0] if len(payload) == 1 else f"[{', '.join(payload)}]"
    if text and thought_words is not None:
        value = f"{thought_words[0]}{text}{thought_words[1]}{value}"
    return {"from": "function_call", "value": value}


def render_sharegpt(
    conversation: Conversation, thought_words: tuple[str, str] | None = None
) -> dict[str, Any]:
    """One example in LLaMA-Factory's sharegpt form.

    Args:
        conversation: The episode's turns.
        thought_words: Delimiters (e.g. `("<think>", "</think>")`) to keep a thought before a
            function_call's JSON, for templates that read them. By default a function_call
            holds only its JSON, as LLaMA-Factory's plain tool templates require, and the
            thought behind a call is left out of this format.
    """
    groups = _group_by_side(conversation.turns)
    if groups and groups[0][0].role == "assistant":
        groups.insert(0, [Turn("user", MISSING_USER_TURN)])
    if groups and groups[-1][0].role != "assistant":
        groups.pop()  # LLaMA-Factory drops a conversation that ends on the human side
    entries = [
        _gpt_entry(group, thought_words) if group[0].role == "assistant" else _human_entry(group)
        for group in groups
    ]
    return {
        "conversations": entries,
        "system": conversation.system,
        "tools": tools_json(conversation),
    }


def tools_json(conversation: Conversation) -> str:
    """The `tools` field: the functions as a JSON list in a string, as LLaMA-Factory reads it."""
    # json.dumps of the list, from each spec's JSON made once: the same text, joined by ", "
    return f"[{', '.join(spec.function_json for spec in conversation.tools)}]"


def dataset_entry(source: dict[str, str]) -> dict[str, Any]:
    """One `dataset_info.json` entry for LLaMA-Factory; `source` says where the data is
    (`file_name`, or `hf_hub_url` with `subset` and `split`)."""
    return {
        **source,
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
        "tags": dict(TAGS),
    }


def dataset_info(file_names: dict[str, str]) -> dict[str, Any]:
    """`dataset_info.json` entries for LLaMA-Factory, one per dataset name -> file name."""
    return {
        name: dataset_entry({"file_name": file_name})
        for name, file_name in sorted(file_names.items())
    }
