"""Reading a model's reply as a thought, and refusing what is not one.

A reply is cleaned (a `<think>` wrapper, a leading `Thought:` label, wrapping quotes and runs of
whitespace go) and then must be a few words of first-person reasoning: not empty, not cut off
mid-sentence by the token limit, not a refusal, not an echo of the prompt's scaffolding, not
about "the agent" from outside, not too long.
Anything else raises `InvalidOutput` with a reason code; the caller asks again a bounded number
of times and then records the failure, never the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bigaction_assets.llm.caller import InvalidOutput
from bigaction_assets.llm.client import Completion

MIN_WORDS = 4
MAX_CHARS = 1200
_THINK = re.compile(r"</?think>", re.IGNORECASE)
_LABEL = re.compile(
    r"^\W*(?:(?:the\s+)?agent'?s\s+thoughts?"
    r"(?:\s+(?:before|prior\s+to)\s+(?:this|the\s+next|that)\s+action)?(?:\s+(?:is|was))?"
    r"|thoughts?|reasoning)\W*?(?::|$)[\s*]*",
    re.I,
)
_QUOTES = {('"', '"'), ("'", "'"), ("“", "”")}
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_REFUSAL = re.compile(
    r"^(?:i'?m sorry|i am sorry|i cannot|i can'?t help|as an ai\b|i'm unable|i am unable)", re.I
)
_SCAFFOLDING = (
    "what happened so far:", "next action:", "write the agent's thought", "[current url:",
    "backend_node_id=", "earlier events left out]", "[... truncated to",
)  # fmt: skip
_HISTORY_LINE = ("task:", "observation:", "action:", "user:")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'll|i'd|me|my|we|we're|we'll|us|our)\b", re.I)


def clean(text: str) -> str:
    """The reply without wrappers, labels, quotes and extra whitespace."""
    text = _SPACE.sub(" ", _THINK.sub(" ", text)).strip()
    while True:
        unlabelled = _LABEL.sub("", text, count=1).strip()
        if len(unlabelled) >= 2 and (unlabelled[0], unlabelled[-1]) in _QUOTES:
            unlabelled = unlabelled[1:-1].strip()
        if unlabelled == text:
            return text
        text = unlabelled


def _complete_sentences(text: str) -> str:
    """The text up to its last sentence end ('' when none ends)."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()] if ends else ""


SHINGLE_WORDS = 8


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i : i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}


def thought_validator(instructions: str) -> Callable[[Completion], str]:
    """`validate_thought` that also refuses a reply copying 8 words in a row of
    `instructions` (the system prompt and its example): `copies_instructions`."""
    copied = _shingles(instructions)

    def validate(completion: Completion) -> str:
        thought = validate_thought(completion)
        if copied & _shingles(thought):
            raise InvalidOutput("copies_instructions", thought[:200])
        return thought

    return validate


def validate_thought(completion: Completion) -> str:
    """The thought in a reply.

    Raises:
        InvalidOutput: `empty`, `truncated`, `refusal`, `echoes_prompt`, `not_first_person`
            (a thought is the agent's own: "I", "my", "we"...), `too_short` or `too_long`.
    """
    text = clean(completion.text)
    if not text:
        raise InvalidOutput("empty", "the reply holds no text")
    if completion.finish_reason == "length":
        # cut off by max_tokens: keep the sentences that ended, if there are any
        kept = _complete_sentences(text)
        if not kept:
            raise InvalidOutput("truncated", f"cut off mid-sentence: {text[:120]!r}")
        text = kept
    lowered = text.lower()
    if _REFUSAL.match(text):
        raise InvalidOutput("refusal", text[:200])
    if lowered.startswith(_HISTORY_LINE) or any(mark in lowered for mark in _SCAFFOLDING):
        raise InvalidOutput("echoes_prompt", text[:200])
    if not _FIRST_PERSON.search(text):
        raise InvalidOutput("not_first_person", text[:200])
    if len(text.split()) < MIN_WORDS:
        raise InvalidOutput("too_short", text[:200])
    if len(text) > MAX_CHARS:
        raise InvalidOutput("too_long", f"{len(text)} characters (at most {MAX_CHARS})")
    return text
