"""What the model is shown for one action: the task, the episode so far within a token budget,
and the action itself.

Each observation is cut to `observation_tokens` (with a visible marker); the history keeps the
most recent events that fit in `history_tokens` and says how many earlier ones it left out.
Earlier actions are shown with their recorded thought, never a generated one: a prompt depends
only on the source data, so its cache key never changes because another call's answer did.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bigaction_assets.sft.arguments import decode_arguments
from bigaction_assets.sft.observations import fit_to_tokens, make_observation_renderer
from bigaction_assets.sft.tools import KNOWN_TOOLS
from bigaction_assets.tokens import count_tokens

ACTION_KINDS = ("api_action", "code_action", "message_action")
Event = Mapping[str, Any]
NO_HISTORY = "(nothing yet: this is the first step)"


@dataclass(frozen=True)
class ContextSettings:
    """Token budgets of a prompt (cl100k_base).

    Attributes:
        observation_tokens: most tokens one observation may take.
        history_tokens: most tokens of the whole history shown before the action.
        action_tokens: most tokens of the action itself (long code is cut).
        representation: pages as `axtree` where there is one, else HTML; or always `html`.
    """

    observation_tokens: int = 768
    history_tokens: int = 3072
    action_tokens: int = 512
    representation: str = "axtree"


def needs_thought(event: Event) -> bool:
    """An agent action with no recorded thought."""
    is_agent_action = event["kind"] in ACTION_KINDS and event.get("actor", "agent") == "agent"
    return is_agent_action and not (event.get("description") or "").strip()


def render_action(event: Event) -> str:
    """An action as one readable line (or a code block): the call, the code, or the message."""
    kind = event["kind"]
    if kind == "message_action":
        return f"send the user this message: {json.dumps(event.get('content') or '')}"
    if kind == "code_action":
        language = event.get("language") or "code"
        return f"run this {language}:\n{event.get('content') or ''}"
    name = str(event.get("function") or "unknown")
    arguments = decode_arguments(event.get("kwargs"), KNOWN_TOOLS.get(name))
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{name}({shown})"


def task_text(episode: Mapping[str, Any], events: Sequence[Event]) -> str:
    """The episode's task, else its first user message."""
    if episode.get("task"):
        return str(episode["task"]).strip()
    for event in sorted(events, key=lambda event: int(event["idx"])):
        if event["kind"] == "text_observation" and event.get("actor") == "user":
            return str(event.get("content") or "").strip()
    return "(not recorded)"


class EpisodeContext:
    """Renders each event of one episode once, and any action's history from those pieces."""

    def __init__(
        self,
        events: Sequence[Event],
        pages: Mapping[str, str],
        settings: ContextSettings,
        task: str = "",
    ) -> None:
        self.settings = settings
        self.task = task
        self.events = sorted(events, key=lambda event: int(event["idx"]))
        representation: Any = settings.representation
        observe = make_observation_renderer(pages, settings.observation_tokens, representation)
        self._pieces: list[tuple[str, int]] = [self._piece(e, observe) for e in self.events]

    def _piece(self, event: Event, observe: Callable[[Event], str]) -> tuple[str, int]:
        """The event as history text and its tokens ('' for the task, shown above already)."""
        if event["kind"] in ACTION_KINDS and event.get("actor", "agent") == "agent":
            text = f"Action: {self.action(event)}"
            thought = (event.get("description") or "").strip()
            if thought:
                text = f"Thought: {thought}\n{text}"
        elif event.get("actor") == "user" and (event.get("content") or "").strip() == self.task:
            return "", 0
        else:
            who = "User" if event.get("actor") == "user" else "Observation"
            text = f"{who}: {observe(event)}"
        return text, count_tokens(text) + 1  # + the newline that joins pieces

    def action(self, event: Event) -> str:
        return fit_to_tokens(render_action(event), self.settings.action_tokens)

    def history(self, position: int) -> str:
        """The events before `position` (an index into the sorted events), latest kept first."""
        shown = [piece for piece in self._pieces[:position] if piece[0]]
        if not shown:
            return NO_HISTORY
        kept: list[str] = []
        used = 0
        for text, tokens in reversed(shown):
            if used + tokens > self.settings.history_tokens:
                break
            kept.append(text)
            used += tokens
        left_out = len(shown) - len(kept)
        lines = [f"[{left_out} earlier events left out]"] if left_out else []
        return "\n".join([*lines, *reversed(kept)])
