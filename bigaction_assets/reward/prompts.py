"""The words of the reward sets: system prompts, the user messages, the judge's answers.

The judge's thought is written from the people's verdict and the latest observation by a
template (rows say `thought_source: template`); a stage with a language model can replace it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from bigaction_assets.reward.rules import Judgement, Observation

PROMPT_VERSION = "1"

JUDGE_SYSTEM = """\
You are the user of a proactive assistant. The assistant watches what you do on your computer \
and, after each new event, either proposes one task it could do for you or proposes nothing \
(the proposed task is then null).
Judge its proposal as the user would:
- accept a task only if you would want it done now: offers you do not need interrupt you;
- when nothing is proposed, accept that if you need no help, and reject it if you do.
Answer with one JSON object: {"thought": "<your reasoning, in the first person>", \
"judgement": "accepted" or "rejected"}."""

ASSISTANT_SYSTEM = """\
You are a proactive assistant. You see what the user did so far, oldest first. Propose the one \
task you could do for them now, or nothing when they need no help: unwanted offers interrupt.
Answer with one JSON object: {"task": "<the task>"} or {"task": null}."""

WEB_SYSTEM = """\
You are a web agent. You see the user's task, the actions taken so far and the current page \
(cleaned HTML; elements carry their id as bnid). Give the next action as one line, e.g. \
click(bid="12") or type(bid="31", text="bananas")."""

_THOUGHTS = {
    "CD": "{task} would help me with exactly that right now, so I want it.",
    "FA": "{task} is not something I need at this moment; the offer would only interrupt me.",
    "CR": "I can carry on by myself here, so it is right that nothing was proposed.",
    "MN": "I could use help at this point, so proposing nothing misses what I need.",
}


def _dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _observations(observations: Sequence[Observation]) -> list[dict[str, str]]:
    return [{"time": o.time, "event": o.event} for o in observations]


def judge_user_message(judgement: Judgement) -> str:
    return _dump(
        {
            "observations (oldest first)": _observations(judgement.observations),
            "proposed task": judgement.task,
            "instruction": "Give your judgement of the proposed task.",
        }
    )


def judge_answer(judgement: Judgement) -> str:
    """`{"thought", "judgement"}`: accepted exactly when people found the proposal valid."""
    latest = judgement.observations[-1].event if judgement.observations else "nothing yet"
    reason = _THOUGHTS[judgement.category].format(task=json.dumps(judgement.task))
    thought = f"Latest event: {json.dumps(latest, ensure_ascii=False)}. {reason}"
    verdict = "accepted" if judgement.valid else "rejected"
    return json.dumps({"thought": thought, "judgement": verdict}, ensure_ascii=False)


def assistant_user_message(observations: Sequence[Observation]) -> str:
    return _dump({"observations (oldest first)": _observations(observations)})


def proposal(task: str | None) -> str:
    return json.dumps({"task": task}, ensure_ascii=False)


def web_user_message(task: str | None, previous: Sequence[str], page: str) -> str:
    steps = "\n".join(f"{n}. {a}" for n, a in enumerate(previous, 1)) or "(none)"
    return f"Task: {task or '(not stated)'}\n\nPrevious actions:\n{steps}\n\nPage:\n{page}"
