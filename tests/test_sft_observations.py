"""The budgeted observation renderer: page choice, HTML compaction and the token budget."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bigaction_assets import tokens
from bigaction_assets.sft import observations
from bigaction_assets.sft.conversation import render_observation
from bigaction_assets.sft.observations import make_observation_renderer
from bigaction_assets.tokens import count_tokens

SHA = "a" * 64
PAGES = {SHA: "<html>\n  <body>\n\n    <button>Buy</button>\n  </body>\n</html>"}


def web(**fields: Any) -> dict[str, Any]:
    return {"kind": "web_observation", "actor": "environment", "url": "http://shop", **fields}


def test_html_from_pages_when_no_axtree():
    text = make_observation_renderer(PAGES, 100)(web(html_sha=SHA))
    assert text == "[Current URL: http://shop]\n<html> <body> <button>Buy</button> </body> </html>"


def test_axtree_preferred_unless_html_asked():
    event = web(axtree="[93] button 'Buy'", html_sha=SHA)
    assert make_observation_renderer(PAGES, 100)(event).endswith("[93] button 'Buy'")
    assert "<button>Buy</button>" in make_observation_renderer(PAGES, 100, "html")(event)
    # no page HTML for this sha: the tree is shown even when HTML was asked for
    assert make_observation_renderer({}, 100, "html")(event).endswith("[93] button 'Buy'")


def test_missing_page_and_other_kinds_as_default():
    render = make_observation_renderer({}, 100)
    assert render(web(html_sha=SHA)) == render_observation(web(html_sha=SHA))
    text = {"kind": "text_observation", "actor": "user", "content": "Buy a shirt."}
    assert render(text) == "Buy a shirt."


def test_long_page_cut_with_marker():
    page = {SHA: "<div>item</div> " * 500}
    text = make_observation_renderer(page, 64)(web(html_sha=SHA))
    assert count_tokens(text) <= 64
    assert text.startswith("[Current URL: http://shop]\n<div>item</div>")
    assert text.endswith("[... truncated to 64 tokens ...]")


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=0, max_size=2000),
    budget=st.integers(min_value=0, max_value=300),
    kind=st.sampled_from(["html", "axtree", "text_observation"]),
)
def test_never_over_budget(text, budget, kind):
    if kind == "text_observation":
        event = {"kind": kind, "actor": "user", "content": text}
    else:
        event = web(html_sha=SHA, axtree=text if kind == "axtree" else None)
    render = make_observation_renderer({SHA: text}, budget)
    rendered = render(event)
    assert count_tokens(rendered) <= budget
    assert render(event) == rendered  # deterministic


def test_a_long_text_that_fits_comes_back_whole():
    # more characters per token than a cut is tried first for: it is walked and kept whole
    text = ("word" + " " * 40 + "\n") * 50
    assert len(text) > observations.CUT_FIRST_CHARACTERS_PER_TOKEN * 300
    assert count_tokens(text) <= 300
    assert observations.fit_to_tokens(text, 300) == text


def test_a_long_text_over_its_budget_is_never_counted_whole(monkeypatch):
    text = "".join(f"    line {n}: value = compute({n}, {n * 7})\n" for n in range(5_000))
    counted: list[int] = []
    real_count = tokens.count_tokens

    def count(piece: str) -> int:
        counted.append(len(piece))
        return real_count(piece)

    monkeypatch.setattr(observations, "count_tokens", count)
    monkeypatch.setattr(tokens, "count_tokens", count)
    cut = observations.fit_to_tokens(text, 256)
    assert cut.endswith("[... truncated to 256 tokens ...]")
    assert real_count(cut) <= 256
    assert max(counted) < len(text) // 10  # the head was counted, not the whole 230 KB file


@settings(max_examples=80, deadline=None)
@given(
    line=st.text(min_size=1, max_size=40),
    repeats=st.integers(min_value=1, max_value=400),
    budget=st.integers(min_value=1, max_value=200),
)
def test_a_cut_tried_first_gives_what_counting_whole_first_gives(line, repeats, budget):
    text = (line + "\n") * repeats
    observations._cuts.clear()
    cut_first = observations.fit_to_tokens(text, budget)
    observations._cuts.clear()
    held = observations.CUT_FIRST_CHARACTERS_PER_TOKEN
    observations.CUT_FIRST_CHARACTERS_PER_TOKEN = 10**9  # as before: every text counted whole
    try:
        assert observations.fit_to_tokens(text, budget) == cut_first
    finally:
        observations.CUT_FIRST_CHARACTERS_PER_TOKEN = held
        observations._cuts.clear()
