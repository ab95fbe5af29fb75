"""LLaMA-Factory's loader rules for sharegpt and openai data: what it would skip or fail on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson

from bigaction_assets.sft.images import SHAREGPT_PLACEHOLDER
from bigaction_assets.sft.sharegpt_format import GPT_SIDE, HUMAN_SIDE, THOUGHT_WORDS

# The tags our openai files are read with (dataset_info `tags` for `"formatting": "openai"`):
# tool results are the observation side, assistant messages that call are function messages.
OPENAI_USER_SIDE = ("user", "tool")
OPENAI_ASSISTANT_SIDE = ("assistant", "function_call")

# Texts found valid, by what they were checked for: a call's value and the tools appear in
# every window of an episode and are parsed once.
_VALID_REMEMBERED = 65_536
_valid: set[tuple[str, str]] = set()


def holds(kind: str, text: Any, check: Callable[[Any], bool]) -> bool:
    """Whether `text` is JSON whose value passes `check`, remembering the texts that do."""
    if not isinstance(text, str):
        return False
    if (kind, text) in _valid:
        return True
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    if not check(value):
        return False
    if len(_valid) >= _VALID_REMEMBERED:
        _valid.clear()
    _valid.add((kind, text))
    return True


def alignment_problems(
    roles: Sequence[Any], user_side: Sequence[str], assistant_side: Sequence[str], ranking: bool
) -> list[str]:
    """LLaMA-Factory's rules on the roles of a conversation, its leading system message taken
    out (converter.py, SharegptDatasetConverter and OpenAIDatasetConverter): the user side at
    even positions and the assistant side at odd ones, checked up to the first that is not; an
    even count, or an odd one for ranking data; else it skips the example as abnormal. Its
    processors then drop a conversation without an odd prompt and a response (supervised.py,
    pairwise.py), so an empty one is lost too. KTO data (a boolean `kto_tag` column) aligns
    like plain data; its last message is the one judged."""
    for position, role in enumerate(roles):
        allowed = user_side if position % 2 == 0 else assistant_side
        if role not in allowed:
            return [f"message {position}: {role!r} where LLaMA-Factory expects one of {allowed}"]
    if not roles:
        return ["no messages: LLaMA-Factory drops the example"]
    if ranking and len(roles) % 2 == 0:
        return [f"{len(roles)} messages: ranking data needs an odd count, the prompt"]
    if not ranking and len(roles) % 2:
        return [f"{len(roles)} messages: LLaMA-Factory needs an even count"]
    return []


def _is_call(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and set(value) == {"name", "arguments"}
        and isinstance(value["arguments"], dict)
    )


def _is_calls(value: Any) -> bool:
    return all(_is_call(call) for call in value) if isinstance(value, list) else _is_call(value)


def _is_tools(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(t, dict) and "name" in t for t in value)


def function_call_problem(value: str, thought_words: tuple[str, str]) -> str | None:
    """Whether a function_call value reads as calls the way LLaMA-Factory's FunctionFormatter
    (formatter.py) reads it: the first text between the thought words, with them, is the
    thought and is taken out wherever it occurs; the rest must be JSON, a call or a list of
    calls (ours: `{name, arguments}` with object arguments)."""
    opening, closing = thought_words
    start = value.find(opening)
    # what its non-greedy search for opening(.*?)closing finds: the first opening, up to the
    # first closing after it (a later opening has no closing after it either)
    end = value.find(closing, start + len(opening)) if start >= 0 else -1
    if end >= 0:
        thought, rest = value[start : end + len(closing)], value[end + len(closing) :]
        # its replace() takes out this first copy, and any later ones
        rest = rest.replace(thought, "") if thought in rest else rest
        value = value[:start] + rest if start else rest
    if not holds("calls", value, _is_calls):  # JSON allows the blanks around it
        return "function_call is not {name, arguments} JSON once its thought is taken out"
    return None


def _answer_problems(
    example: dict[str, Any], ranking: bool, role_key: str, allowed: Sequence[str]
) -> list[str]:
    """Ranking data's `chosen` and `rejected`: messages of the assistant side (converter.py)."""
    if not ranking:
        return []
    problems = []
    for key in ("chosen", "rejected"):
        answer = example.get(key)
        if not isinstance(answer, dict) or answer.get(role_key) not in allowed:
            problems.append(f"{key} is not a message of the assistant side")
    return problems


def sharegpt_rules(
    example: dict[str, Any], thought_words: tuple[str, str] = THOUGHT_WORDS, ranking: bool = False
) -> list[str]:
    """Everything LLaMA-Factory checks of one sharegpt example (our dataset_info tags), plus
    values that are text and function_call values that are calls."""
    entries = example.get("conversations")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return ["conversations is not a list of messages"]
    if entries and entries[0].get("from") == "system":
        entries = entries[1:]
    problems = alignment_problems([e.get("from") for e in entries], HUMAN_SIDE, GPT_SIDE, ranking)
    problems += _answer_problems(example, ranking, "from", GPT_SIDE)
    for position, entry in enumerate(entries):
        value = entry.get("value")
        if not isinstance(value, str):
            problems.append(f"message {position}: value is not text")
        elif entry.get("from") == "function_call":
            problem = function_call_problem(value, thought_words)
            if problem:
                problems.append(f"message {position}: {problem}")
    problems += image_problems(example, entries)
    if "tools" in example and not holds("tools", example["tools"], _is_tools):
        problems.append("tools is not a JSON string holding a list of functions")
    if not isinstance(example.get("system", ""), str):
        problems.append("system is not text")
    return problems


def image_problems(example: dict[str, Any], entries: list[dict[str, Any]]) -> list[str]:
    """LLaMA-Factory's rule on images (mm_plugin.py, `_validate_messages`): as many images as
    image placeholders in the messages' contents (the system prompt is not a message there), an
    `images` column of paths; an example with placeholders and no images fails the batch."""
    images = example.get("images", [])
    if not isinstance(images, list) or not all(isinstance(path, str) for path in images):
        return ["images is not a list of paths"]
    placeholders = sum(
        entry["value"].count(SHAREGPT_PLACEHOLDER)
        for entry in entries
        if isinstance(entry.get("value"), str)
    )
    if placeholders != len(images):
        return [f"{len(images)} images for {placeholders} {SHAREGPT_PLACEHOLDER} placeholders"]
    return []


def openai_rules(example: dict[str, Any], ranking: bool = False) -> list[str]:
    """LLaMA-Factory's `openai` formatting of one example (OpenAIDatasetConverter): an
    assistant message with tool calls becomes a function message (its text is replaced by the
    calls), consecutive tool messages become one observation (those at the very end are
    dropped), and the result must align like sharegpt data."""
    messages = example.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return ["messages is not a list of messages"]
    if messages and messages[0].get("role") == "system":
        messages = messages[1:]
    aligned: list[Any] = []
    results = 0
    for message in messages:
        role = message.get("role")
        if role == "tool":
            results += 1
            continue
        if results:
            aligned.append("tool")
            results = 0
        calls = role == "assistant" and bool(message.get("tool_calls"))
        aligned.append("function_call" if calls else role)
    problems = alignment_problems(aligned, OPENAI_USER_SIDE, OPENAI_ASSISTANT_SIDE, ranking)
    # its answers are compared with role names, not tags: "function" for a call
    return problems + _answer_problems(example, ranking, "role", ("assistant", "function"))
