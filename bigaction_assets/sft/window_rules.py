"""What the consumers of every SFT format require of a window, checked on the turns it is
rendered from rather than on its renderings.

Each renderer makes one message of each run of turns of one side (`side_groups`), so the
messages of every format alternate between the sides by construction. What the turns can still
break is checked here, once per window, for all formats at once: the window opens on the user's
side and ends on the assistant's, each tool result answers the call just before it and every
call but the last is answered, OpenHands reads one call at the end of a message, and OpenAI
takes so many screenshots. Text that a format's markup cannot carry is checked per episode
(`examples.markup_problems`); the blocking check reads the stored renderings back and applies
each consumer's rules to them (`validate`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bigaction_assets.sft.images import OPENAI_MAX_IMAGES
from bigaction_assets.sft.turns import Conversation


def window_problems(window: Conversation, formats: Sequence[str]) -> list[str]:
    """Why a consumer of one of `formats` would refuse the window; empty when none would."""
    runs = window.groups
    if not runs:
        return ["the window has no turns"]
    problems = []
    if runs[0][0].role == "assistant":
        problems.append("the window opens with the assistant's turn, not the user's side")
    if runs[-1][0].role != "assistant":
        problems.append("the window does not end on the assistant's turn: nothing to learn")
    unanswered: set[str] = set()
    images = 0
    for number, run in enumerate(runs):
        images += sum(len(turn.images) for turn in run)
        first = run[0]
        if first.role == "assistant":
            calls = [call.id for turn in run for call in turn.tool_calls]
            if not all(calls):
                problems.append(f"message {number}: a call without an id")
            if "openhands" in formats and (
                len(calls) > 1 or any(turn.tool_calls for turn in run[:-1])
            ):
                problems.append(f"message {number}: OpenHands reads one call, at its end")
            unanswered = set(calls)
            continue
        if first.role == "tool":
            if first.tool_call_id not in unanswered:
                problems.append(f"message {number}: a tool result answers no call before it")
            unanswered.discard(first.tool_call_id or "")
        if unanswered:
            problems.append(f"message {number}: calls before it are not answered")
            unanswered = set()
        if any(turn.role == "tool" for turn in run[1:]):
            problems.append(f"message {number}: a tool result that does not follow its call")
    if "openai" in formats and images > OPENAI_MAX_IMAGES:
        problems.append(f"{images} images: OpenAI takes at most {OPENAI_MAX_IMAGES} an example")
    return problems
