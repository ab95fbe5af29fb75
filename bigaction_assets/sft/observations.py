"""Observation events as text a model can read, each within a token budget."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from bigaction_assets.sft.conversation import Event, is_agent_action, render_observation
from bigaction_assets.tokens import (
    TRUNCATION_MARKER,
    count_tokens,
    cut_to_tokens,
    truncate_to_tokens,
)

Representation = Literal["axtree", "html"]
_WHITESPACE = re.compile(r"\s+")


# Texts counted whole before a cut is tried: counting is cheap, and most observations fit.
COUNT_WHOLE_CHARACTERS = 262_144
# Unless they hold this many characters per token of the budget: cl100k_base takes ~4 per token
# on code and pages, so such a text is all but sure not to fit, and the cut, which counts its
# head alone, says so for less (a file listing of 100 KB cut to 2,048 tokens: ~8 KB counted,
# not 100). Either way the result is the same: the cut gives back a text that fits, whole.
CUT_FIRST_CHARACTERS_PER_TOKEN = 4
# A page shown again (the next step, a failed action) is cut once; memory stays bounded.
_CUTS_REMEMBERED = 4_096
_cuts: dict[tuple[str, int], str] = {}


def fit_to_tokens(text: str, budget_tokens: int) -> str:
    """`text` within `budget_tokens`: cut with the visible truncation marker, or, when even the
    marker does not fit, cut bare (a tiny budget must still be honoured)."""
    counted_whole = min(COUNT_WHOLE_CHARACTERS, CUT_FIRST_CHARACTERS_PER_TOKEN * budget_tokens)
    if len(text) <= counted_whole and count_tokens(text) <= budget_tokens:
        return text
    known = _cuts.get((text, budget_tokens))
    if known is not None:
        return known
    marker = TRUNCATION_MARKER.format(budget=budget_tokens)
    if count_tokens(marker) < budget_tokens:
        cut = truncate_to_tokens(text, budget_tokens)
    else:
        cut = cut_to_tokens(text, budget_tokens)
    if len(_cuts) >= _CUTS_REMEMBERED:
        _cuts.clear()
    _cuts[text, budget_tokens] = cut
    return cut


def compact_html(html: str) -> str:
    """HTML with every run of whitespace collapsed to one space: same page, fewer tokens."""
    return _WHITESPACE.sub(" ", html).strip()


def _web_text(event: Event, pages: Mapping[str, str], representation: Representation) -> str:
    html = pages.get(event.get("html_sha") or "")
    axtree = event.get("axtree")
    if axtree and (representation == "axtree" or not html):
        body = str(axtree)
    elif html:
        body = compact_html(html)
    else:
        return render_observation(event)  # says where the page is kept, or that there is none
    return f"[Current URL: {event.get('url') or 'unknown'}]\n{body}"


def make_observation_renderer(
    pages: Mapping[str, str],
    budget_tokens: int,
    representation: Representation = "axtree",
) -> Callable[[Mapping[str, Any]], str]:
    """A renderer for `build_conversation` that shows each observation within a budget.

    Args:
        pages: Page HTML by `html_sha` (cleaned HTML where the source has it, else raw).
        budget_tokens: Most cl100k_base tokens one rendered observation may take; a longer one
            is cut and says so.
        representation: `axtree` shows a page's accessibility tree where the event has one and
            its HTML otherwise; `html` shows the HTML wherever `pages` holds it.
    """
    if representation not in ("axtree", "html"):
        raise ValueError(f"representation must be 'axtree' or 'html', not {representation!r}")

    def render(event: Mapping[str, Any]) -> str:
        if event.get("kind") == "web_observation":
            text = _web_text(event, pages, representation)
        else:
            text = render_observation(event)
        return fit_to_tokens(text, budget_tokens)

    return render


def observations_ahead(
    episodes: Iterable[tuple[list[Event], Mapping[str, str]]],
    budget_tokens: int,
    representation: Representation = "axtree",
) -> dict[int, str]:
    """The shown text of every event that is not an agent action, for many episodes at once,
    by `id(event)` (the events must outlive the result).

    Counting a text's tokens reads the tokenizer's tables; counted one observation at a time
    between the rest of rendering, they had left the CPU's caches each time, and counting took
    ~2x as long per character. Made back to back for a chunk of episodes, then looked up
    (`shown_ahead`): 6-7% less CPU for rendering synatra, 4-9% for swe-smith (measured).
    """
    shown: dict[int, str] = {}
    for events, pages in episodes:
        render = make_observation_renderer(pages, budget_tokens, representation)
        for event in events:
            if is_agent_action(event):
                continue
            # an event that cannot be shown is left to the episode's own rendering: it fails
            # there as it did before, or the episode is skipped before it gets there
            with contextlib.suppress(Exception):
                shown[id(event)] = render(event)
    return shown


def shown_ahead(
    shown: Mapping[int, str], render: Callable[[Mapping[str, Any]], str]
) -> Callable[[Mapping[str, Any]], str]:
    """`render`, answered from `observations_ahead` for the events it holds."""

    def lookup(event: Mapping[str, Any]) -> str:
        text = shown.get(id(event))
        return render(event) if text is None else text

    return lookup
