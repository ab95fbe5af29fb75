"""Standardized episodes to SFT example rows: windows, renderings in every format, splits."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from bigaction_assets.event_marks import GENERATED
from bigaction_assets.sft.conversation import ACTION_KINDS, MissingTask, build_conversation
from bigaction_assets.sft.counting import conversation_tokens
from bigaction_assets.sft.formats import SFT_FORMATS, THOUGHT_KINDS
from bigaction_assets.sft.images import IMAGE_TOKENS, SHAREGPT_PLACEHOLDER, run_images
from bigaction_assets.sft.observations import make_observation_renderer, shown_ahead
from bigaction_assets.sft.openai_format import render_openai
from bigaction_assets.sft.openhands_blocks import text_problems, unwritable
from bigaction_assets.sft.openhands_format import render_openhands
from bigaction_assets.sft.sharegpt_format import THOUGHT_WORDS, render_sharegpt
from bigaction_assets.sft.splits import DEFAULT_RATIOS, assign_split
from bigaction_assets.sft.tools import ToolSpec, once_per_tool_set, openai_tools, tool_set_key
from bigaction_assets.sft.turns import Conversation, assistant_text_and_calls
from bigaction_assets.sft.window_rules import window_problems
from bigaction_assets.sft.windows import NoAction, split_into_windows

RENDERERS = {"openai": render_openai, "sharegpt": render_sharegpt, "openhands": render_openhands}


@dataclass(frozen=True)
class ExampleSettings:
    """The knobs that shape examples (the asset's run config mirrors them).

    Attributes:
        max_tokens: context length every example must fit, in cl100k_base tokens.
        observation_tokens: budget of one rendered observation.
        representation: how pages are shown, `axtree` where there is one, or `html`.
        split_ratios: share of episodes per split, by name, adding up to 1.
        split_salt: changes the draw of splits while keeping it stable.
        formats: the SFT formats to render (and to fit in the context); the others are null.
        images: show each observation's screenshot where the lake has it (false: text only).
        image_tokens: what one screenshot costs in the token budget of the formats that
            carry images (openai, sharegpt); the OpenHands text names it in a line instead.
    """

    max_tokens: int = 8192
    observation_tokens: int = 2048
    representation: str = "axtree"
    split_ratios: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_RATIOS))
    split_salt: str = ""
    formats: tuple[str, ...] = SFT_FORMATS
    images: bool = True
    image_tokens: int = IMAGE_TOKENS

    def __post_init__(self) -> None:
        if self.image_tokens < 0:
            raise ValueError(f"image_tokens must be 0 or more, not {self.image_tokens}")
        unknown = sorted(set(self.formats).difference(SFT_FORMATS))
        if unknown or not self.formats:
            raise ValueError(f"formats must be some of {SFT_FORMATS}, not {list(self.formats)}")


NOT_FOR_TRAINING = "not_for_training"
# Reasons of the data's own for an episode to give no example (the metadata counts them).
NO_TASK = "no_task"
NO_AGENT_ACTION = "no_agent_action"
FORMAT_MARKUP = "text_holds_format_markup"


class EpisodeSkipped(Exception):
    """An episode that yields no example, with a reason code for the stage's metadata."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    def __reduce__(self) -> tuple[type[EpisodeSkipped], tuple[str, str]]:
        return EpisodeSkipped, (self.reason, self.detail)  # it crosses process boundaries


def content_key(conversation: Conversation) -> str:
    """sha256 of what a model is trained on, without ids derived from the episode, so the same
    trajectory under two ids counts as a duplicate."""
    turns = [
        (turn.role, turn.content, [(call.name, call.arguments) for call in turn.tool_calls])
        if not turn.images  # the same key as before screenshots were carried
        else (
            turn.role,
            turn.content,
            [(c.name, c.arguments) for c in turn.tool_calls],
            turn.images,
        )
        for turn in conversation.turns
    ]
    # content_hash([system, tools, turns]), its tools' canonical JSON made once per tool set:
    # a JSON array is its items' texts, comma-separated, between brackets
    parts = (orjson.dumps(conversation.system), _tools_canonical(conversation.tools))
    body = orjson.dumps(turns, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(b"[%b,%b,%b]" % (*parts, body)).hexdigest()


_tool_sets: dict[tuple[str, ...], bytes] = {}


def _tools_canonical(tools: Sequence[ToolSpec]) -> bytes:
    """The tools as `content_hash` serializes them (OpenAI tool dicts, sorted keys)."""
    return once_per_tool_set(
        _tool_sets,
        tool_set_key(tools),
        lambda: orjson.dumps(openai_tools(tools), option=orjson.OPT_SORT_KEYS),
    )


def action_thought_kind(event: Mapping[str, Any]) -> str:
    """Where an action's thought came from: `recorded` with it, `adp_generated` (ADP's thought
    cache, kept in `events.thought_source`), `generated` by the thoughts stage, or `none`."""
    if not (event.get("description") or "").strip():
        return "none"
    if event.get(GENERATED):
        return "generated"
    return event.get("thought_source") or "recorded"


def thought_source(events: Iterable[Mapping[str, Any]]) -> str:
    """The kinds of thought the episode's agent actions show, joined by `+` in the order of
    `THOUGHT_KINDS`: `recorded`, `recorded+adp_generated`, `generated+none` (some actions
    have no thought), ...; `none` for an episode without actions."""
    actions = [e for e in events if e["kind"] in ACTION_KINDS and e.get("actor") == "agent"]
    kinds = {action_thought_kind(action) for action in actions}
    return "+".join(kind for kind in THOUGHT_KINDS if kind in kinds) or "none"


def markup_problems(conversation: Conversation, formats: tuple[str, ...]) -> list[str]:
    """Text of the episode that a format's own markup cannot carry: for OpenHands, calls its
    parser would not read back (`openhands_blocks.unwritable`) and assistant text it would read
    as a call; for LLaMA-Factory, a thought before a call that holds the closing thought word.
    Checked once per episode on the turns, instead of reading every rendering back. For
    LLaMA-Factory too: text holding its image placeholder, which it would pair with an image."""
    problems: list[str] = []
    if "sharegpt" in formats:
        problems += _placeholder_problems(conversation)
    for group in conversation.groups:
        if group[0].role != "assistant":
            continue
        thought, calls = assistant_text_and_calls(group)
        if "openhands" in formats:
            for turn in group:
                for call in turn.tool_calls:
                    problems += unwritable(call.name, call.arguments, turn.content)
                if not turn.tool_calls:
                    problems += text_problems(turn.content, "an assistant message")
        if "sharegpt" in formats and calls and THOUGHT_WORDS[1] in thought:
            problems.append(f"a thought holds the closing thought word {THOUGHT_WORDS[1]!r}")
    return problems


def _placeholder_problems(conversation: Conversation) -> list[str]:
    for turn in conversation.turns:
        texts = [turn.content, *(call.call_json for call in turn.tool_calls)]
        if any(SHAREGPT_PLACEHOLDER in text for text in texts):
            return [f"a {turn.role} message holds LLaMA-Factory's image placeholder"]
    return []


def episode_examples(
    episode: Mapping[str, Any],
    events: list[Mapping[str, Any]],
    pages: Mapping[str, str],
    settings: ExampleSettings,
    shown: Mapping[int, str] | None = None,
) -> list[dict[str, Any]]:
    """One `sft_examples` row per window of the episode, rendered in every format (each
    rendering as JSON in UTF-8 bytes) from turns checked against its consumers' rules
    (`markup_problems`, `window_rules`). `shown`: its observations' texts made ahead
    (`observations_ahead`); the same rows with or without.

    Raises:
        EpisodeSkipped: the episode is marked `train_on: false`, opens with an action and has
            no task, has no agent action, holds text a format's markup cannot carry, no
            window fits the context, or a window breaks a consumer's rules.
    """
    details = orjson.loads(episode.get("details") or "{}")
    if details.get("train_on") is False:  # e.g. benchmark data whose actions people rejected
        raise EpisodeSkipped(NOT_FOR_TRAINING, str(details.get("why") or "marked train_on false"))
    render = make_observation_renderer(pages, settings.observation_tokens, settings.representation)
    if shown:  # observations rendered ahead for a chunk of episodes (`observations_ahead`)
        render = shown_ahead(shown, render)
    try:
        conversation = build_conversation(
            episode, events, render_observation=render, images=settings.images
        )
    except MissingTask as exc:
        raise EpisodeSkipped(NO_TASK, str(exc)) from exc
    formats = settings.formats
    markup = markup_problems(conversation, formats)
    if markup:
        raise EpisodeSkipped(FORMAT_MARKUP, "; ".join(markup[:3]))
    try:
        windows = split_into_windows(
            conversation, settings.max_tokens, formats, settings.image_tokens
        )
    except NoAction as exc:
        raise EpisodeSkipped(NO_AGENT_ACTION, str(exc)) from exc
    except ValueError as exc:  # a step that cannot fit the context at any cut
        raise EpisodeSkipped("does_not_fit_context", str(exc)) from exc
    split = assign_split(str(episode["episode_id"]), settings.split_ratios, settings.split_salt)
    thoughts = thought_source(events)
    rows = []
    for number, window in enumerate(windows):
        problems = window_problems(window, formats)
        if problems:  # a consumer would refuse it: keep the episode out and say why
            raise EpisodeSkipped("invalid_for_consumer", f"window {number}: {problems[:3]}")
        rendered = {name: RENDERERS[name](window) for name in formats}
        rows.append({
            "example_id": f"{episode['episode_id']}#{number}",
            "episode_id": episode["episode_id"],
            "dataset": episode["dataset"],
            "source": episode["source"],
            "window": number,
            "windows": len(windows),
            "split": split,
            "tokens": window.tokens
            if window.tokens is not None
            else conversation_tokens(window, formats, settings.image_tokens),
            "context_tokens": settings.max_tokens,
            "images": run_images(window.turns),
            "image_tokens": settings.image_tokens,
            "turns": len(window.groups),
            "thought_source": thoughts,
            "content_sha": content_key(window),
            # UTF-8 bytes, as Arrow stores them: no decoding to str only to encode it again
            **{
                name: orjson.dumps(rendered[name]) if name in rendered else None
                for name in SFT_FORMATS
            },
        })  # fmt: skip
    return rows
