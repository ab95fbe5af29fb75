"""The two-turn prompts of the benchmark (SeeAct's scheme), from versioned template files.

Turn one asks for the next action in words, from the task, previous actions and page; turn two
is a multiple choice over the candidates, labelled A…Z, AA, AB…, closed by a "none of the other
options" choice, asking for ELEMENT, ACTION and VALUE. Templates live in `prompts/<version>/`;
a change to them is a new version, so snapshots say which prompts they hold.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from bigaction_assets.llm.image_parts import image_part, text_part

PROMPT_VERSION = "v1"
NONE_OF_THE_OTHERS = "None of the other options match the correct element"
NO_PREVIOUS_ACTIONS = "None"


def choice_label(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA, 27 → AB: spreadsheet-column letters."""
    if index < 0:
        raise ValueError(f"choice index must be >= 0, not {index}")
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("A") + rest) + label
    return label


def label_index(label: str) -> int | None:
    """The inverse of `choice_label`; None for anything that is not a run of capitals."""
    if not label or not label.isascii() or not label.isalpha() or not label.isupper():
        return None
    index = 0
    for char in label:
        index = index * 26 + (ord(char) - ord("A") + 1)
    return index - 1


@cache
def template(name: str, version: str = PROMPT_VERSION) -> string.Template:
    text = resources.files(__package__).joinpath("prompts", version, f"{name}.txt").read_text()
    return string.Template(text)


@dataclass(frozen=True)
class StepPrompts:
    """Chat messages of both turns: turn one (system and user), then the grounding turn."""

    turn_one: list[dict[str, str]]
    turn_two: list[dict[str, str]]


def step_prompts(
    task: str,
    previous_actions: list[str],
    page: str,
    choices: list[str],
    version: str = PROMPT_VERSION,
) -> StepPrompts:
    """The messages for one step; `choices` are rendered candidates in their drawn order."""
    lines = [f"{choice_label(i)}. {choice}" for i, choice in enumerate(choices)]
    none_label = choice_label(len(choices))
    lines.append(f"{none_label}. {NONE_OF_THE_OTHERS}")
    user_one = template("turn_one", version).substitute(
        task=task,
        previous_actions="\n".join(previous_actions) or NO_PREVIOUS_ACTIONS,
        page=page,
    )
    user_two = template("turn_two", version).substitute(
        choices="\n".join(lines), none_label=none_label, none_text=NONE_OF_THE_OTHERS
    )
    return StepPrompts(
        turn_one=[
            {"role": "system", "content": template("system", version).substitute()},
            {"role": "user", "content": user_one},
        ],
        turn_two=[{"role": "user", "content": user_two}],
    )


def with_screenshot(
    turn_one: list[dict[str, Any]], data: bytes, image_format: str, version: str = PROMPT_VERSION
) -> list[dict[str, Any]]:
    """Turn one with the step's screenshot in its user message, as SeeAct's first query holds
    it: the text, a line saying what follows, then the image as an `image_url` data URL."""
    *before, user = turn_one
    note = template("screenshot", version).substitute().strip()
    parts = [text_part(str(user["content"])), text_part(note), image_part(data, image_format)]
    return [*before, {**user, "content": parts}]
