"""What a label may say, per kind of item, checked before anything is stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

WEB_STEP = "web_step"
PROACTIVE_TURN = "proactive_turn"
ITEM_KINDS = (WEB_STEP, PROACTIVE_TURN)
WEB_VERDICTS = ("correct", "incorrect", "unsure")


class InvalidLabel(ValueError):
    """A label the item's kind does not allow; the message says why, for the annotator."""


def check_label(kind: str, payload: Mapping[str, Any], label: Mapping[str, Any]) -> dict[str, Any]:
    """The label in its stored form.

    Web step: `{"verdict": "correct" | "incorrect" | "unsure"}`.
    Proactive turn: `{"accepted_tasks": [positions], "help_needed": bool}`; accepting a task
    says help is needed, and "reject all" is an empty list with the annotator's help answer.
    """
    if kind == WEB_STEP:
        verdict = label.get("verdict")
        if verdict not in WEB_VERDICTS:
            raise InvalidLabel(f"verdict must be one of {', '.join(WEB_VERDICTS)}")
        return {"verdict": verdict}
    if kind == PROACTIVE_TURN:
        accepted = label.get("accepted_tasks")
        if not isinstance(accepted, list) or not all(
            isinstance(k, int) and not isinstance(k, bool) for k in accepted
        ):
            raise InvalidLabel("accepted_tasks must be a list of task numbers")
        count = len(payload.get("candidate_tasks") or ())
        if any(k < 0 or k >= count for k in accepted) or len(set(accepted)) != len(accepted):
            raise InvalidLabel(f"accepted_tasks must be distinct numbers from 0 to {count - 1}")
        help_needed = label.get("help_needed")
        if accepted:
            if help_needed is False:
                raise InvalidLabel("accepting a task says help is needed")
            help_needed = True
        if not isinstance(help_needed, bool):
            raise InvalidLabel("say whether help is needed")
        return {"accepted_tasks": sorted(accepted), "help_needed": help_needed}
    raise InvalidLabel(f"unknown item kind {kind!r}")
