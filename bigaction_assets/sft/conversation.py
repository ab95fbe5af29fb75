"""An episode's events as the conversation every SFT format renders from (`turns`): its calls,
the thoughts that go with them, and the observations they are shown."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bigaction_assets.event_marks import IMAGE_NAME
from bigaction_assets.joined_tokens import join_counted
from bigaction_assets.sft.arguments import decode_arguments
from bigaction_assets.sft.openhands_blocks import written_finish
from bigaction_assets.sft.tools import (
    FINISH_TOOL,
    KNOWN_TOOLS,
    code_tool,
    tools_for_calls,
)
from bigaction_assets.sft.turns import Conversation, ToolCall, Turn

Event = Mapping[str, Any]
ObservationRenderer = Callable[[Event], str]

DEFAULT_SYSTEM_PROMPT = (
    "You are an agent that completes the user's task step by step by calling the functions "
    "provided. Think briefly before each call."
)
# A call must be answered before the conversation moves on (OpenAI requires it); when the
# source recorded nothing, the answer says so rather than inventing an output.
NO_OBSERVATION = "[no observation recorded]"
ACTION_KINDS = ("api_action", "code_action", "message_action")
# NNetNav marks its final answer `<finish> ... </finish>`; inside a finish call it is redundant.
_FINISH_MARKUP = re.compile(r"^\s*<finish>(.*)</finish>\s*$", re.DOTALL)


class MissingTask(ValueError):
    """An episode opens with an action and records no task to put before it."""


def tool_call_id(episode_id: str, idx: int) -> str:
    """A stable call id from the episode and the action's position, never random."""
    digest = hashlib.sha256(f"{episode_id}\x00{idx}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def render_web_observation(event: Event) -> str:
    """The page as its URL and accessibility tree; without a tree, where its HTML is kept."""
    lines = [f"[Current URL: {event.get('url') or 'unknown'}]"]
    if event.get("axtree"):
        lines.append(str(event["axtree"]))
    elif event.get("html_sha"):
        lines.append(f"[Page HTML kept in dom_snapshots, html_sha {event['html_sha']}]")
    else:
        lines.append("[No page content recorded]")
    return "\n".join(lines)


def render_observation(event: Event) -> str:
    """Default text for any observation event."""
    kind = event.get("kind")
    if kind == "web_observation":
        return render_web_observation(event)
    if kind == "image_observation":
        if event.get(IMAGE_NAME):  # the image itself is shown: no text stands for it
            return ""
        return f"[Image: {event.get('image_path') or event.get('content') or 'unknown'}]"
    return str(event.get("content") or "")


def _joined(first: str, second: str) -> str:
    """Two observation texts of one turn, a blank line between; an empty one adds nothing.
    The joined text's token count is composed from the parts' (counted as they were cut)."""
    return join_counted("\n\n", first, second) if first and second else first or second


def _call_of(
    event: Event, episode_id: str, final_message: bool, completed: bool | None = None
) -> tuple[ToolCall | None, str]:
    """The action's call (None for a plain message) and the assistant text that goes with it;
    a final message's finish call says `task_completed` only when the source records it."""
    idx = int(event["idx"])
    thought = str(event.get("description") or "")
    kind = event["kind"]
    if kind == "message_action":
        message = str(event.get("content") or "")
        if not final_message:
            return None, "\n\n".join(part for part in (thought, message) if part)
        # an agent that wrote its finish call as text meant that call; whether the task was
        # completed is said from the source's record of the outcome, never the run's own claim
        answer = written_finish(message)
        if answer is None:
            marked = _FINISH_MARKUP.match(message)
            answer = {"message": marked.group(1).strip() if marked else message}
        answer.pop("task_completed", None)
        if completed is not None:
            answer["task_completed"] = "true" if completed else "false"
        return ToolCall(tool_call_id(episode_id, idx), FINISH_TOOL.name, answer), thought
    if kind == "code_action":
        spec = code_tool(event.get("language"))
        [parameter] = spec.required
        arguments = {parameter: str(event.get("content") or "")}
        return ToolCall(tool_call_id(episode_id, idx), spec.name, arguments), thought
    name = str(event["function"])
    arguments = decode_arguments(event.get("kwargs"), KNOWN_TOOLS.get(name))
    return ToolCall(tool_call_id(episode_id, idx), name, arguments), thought


def build_conversation(
    episode: Mapping[str, Any],
    events: Sequence[Event],
    render_observation: ObservationRenderer = render_observation,
    system_prompt: str = DEFAULT_SYSTEM_PROMPT,
    images: bool = True,
) -> Conversation:
    """Turns and tool calls of one episode, with each action's thought as assistant text.

    The conversation opens with a user turn: an episode that opens with an action gets its
    task (`episodes.task`) before it, and an opening agent message that is the task itself (ADP's
    Android datasets record the instruction so) becomes that user turn.

    Args:
        episode: The episode row (`episode_id`, `task`, and `task_completed` for the finish
            call).
        events: Its event rows.
        render_observation: Text shown for an observation event (e.g. an HTML renderer with
            a token budget); the default shows the accessibility tree.
        system_prompt: The system message, before any format adds tool documentation.
        images: Show each observation's screenshot (events with `image_name`) with its turn;
            false gives the text-only conversation.

    Raises:
        MissingTask: the episode opens with an action and has no task.
    """
    episode_id = str(episode["episode_id"])
    task = str(episode.get("task") or "").strip()
    ordered = sorted(events, key=lambda event: int(event["idx"]))
    agent_actions = [e for e in ordered if is_agent_action(e)]
    if agent_actions and agent_actions[0] is ordered[0] and _states_task(ordered[0], task):
        agent_actions.pop(0)  # shown as the user's words below, like any observation
    action_ids = {id(action) for action in agent_actions}
    last_action = agent_actions[-1] if agent_actions else None
    turns: list[Turn] = []
    pending: ToolCall | None = None

    def answer_pending() -> None:
        nonlocal pending
        if pending is not None:
            turns.append(Turn("tool", NO_OBSERVATION, tool_call_id=pending.id, name=pending.name))
            pending = None

    for event in ordered:
        if id(event) in action_ids:
            answer_pending()
            final = event is last_action
            call, text = _call_of(event, episode_id, final, episode.get("task_completed"))
            turns.append(Turn("assistant", text, tool_calls=[call] if call else []))
            pending = call  # answered by what follows; a finish the agent takes back too
            continue
        text = render_observation(event)
        shown = [event[IMAGE_NAME]] if images and event.get(IMAGE_NAME) else []
        if not shown and event.get(IMAGE_NAME) and event.get("kind") == "image_observation":
            text = f"[Image: {event.get('image_path') or event[IMAGE_NAME]}]"  # text-only
        from_environment = event.get("actor") == "environment"
        last = turns[-1] if turns else None
        if pending is not None and from_environment:
            turns.append(
                Turn("tool", text, tool_call_id=pending.id, name=pending.name, images=shown)
            )
            pending = None
        elif last is not None and last.role == "tool" and from_environment:
            last.content = _joined(last.content, text)
            last.images += shown
        else:
            answer_pending()
            last = turns[-1] if turns else None
            if last is not None and last.role == "user":
                last.content = _joined(last.content, text)
                last.images += shown
            else:
                turns.append(Turn("user", text, images=shown))
    if not turns or turns[0].role != "user":
        if not task:
            raise MissingTask(f"episode {episode_id} opens with an action and records no task")
        turns.insert(0, Turn("user", task))
    calls = [(call.name, call.arguments) for turn in turns for call in turn.tool_calls]
    return Conversation(episode_id, system_prompt, tools_for_calls(calls), turns)


def is_agent_action(event: Event) -> bool:
    """Whether an event is the agent's action (a call), not something it is shown."""
    return event["kind"] in ACTION_KINDS and event.get("actor", "agent") == "agent"


def _states_task(event: Event, task: str) -> bool:
    """Whether an agent event is a message holding exactly the episode's task."""
    content = str(event.get("content") or "").strip()
    return event["kind"] == "message_action" and bool(task) and content == task
