"""DOM cleaning: what it keeps and drops, ids, rendering, pruning, and finding elements."""

from __future__ import annotations

import json

import pytest

from bigaction_assets.dom import clean_page, render, render_pruned
from bigaction_assets.dom.match import find_outer_html, interactive_elements
from bigaction_assets.dom.xpath import XPathInvalid, find_xpath
from tests.conftest import BUNDLED_LANDING

PAGE = """<html backend_node_id="1"><head backend_node_id="2"><title>Shop</title>
<style backend_node_id="3">.x{color:red}</style><script backend_node_id="4">var a = "<b>";</script>
</head><body backend_node_id="5" class="app">
<nav backend_node_id="6" aria_label="Main"><a backend_node_id="7" href="/uk" class="nav">
  Work   in the UK </a></nav>
<div backend_node_id="8" style="display: none"><button backend_node_id="9">Hidden</button></div>
<div backend_node_id="10" aria_hidden="true">also hidden</div>
<div backend_node_id="11"><span backend_node_id="12"></span></div>
<div backend_node_id="13" class="clickable-card"></div>
<input backend_node_id="14" type="text" name="q" placeholder="Search" data-x="1"/>
<input backend_node_id="15" type="hidden" name="csrf" value="secret"/>
<p backend_node_id="16">Fish &amp; chips <b backend_node_id="17">today</b> only</p>
</body></html>"""


def test_cleaning_keeps_salient_parts_and_drops_the_rest():
    cleaned = render(clean_page(PAGE))
    assert cleaned == (
        "<html bnid=1><body bnid=5><nav bnid=6 aria_label=Main><a bnid=7>"
        "<text bnid=7.1>Work in the UK</text></a></nav>"
        "<input bnid=14 type=text name=q placeholder=Search/>"
        "<p bnid=16><text bnid=16.1>Fish &amp; chips</text><b bnid=17><text bnid=17.1>today</text>"
        "</b><text bnid=16.2>only</text></p></body></html>"
    )


def test_keep_saves_an_empty_candidate_but_not_a_hidden_one():
    page = clean_page(PAGE, keep={"13", "9"})
    assert "13" in page and "9" not in page
    assert render(page.nodes["13"]) == "<div bnid=13/>"


def test_a_candidate_renders_as_in_the_issue_from_mind2web_cleaned_html():
    cleaned = (
        '<html backend_node_id="1"><body backend_node_id="2"><a backend_node_id="4945">'
        '<text backend_node_id="5549">Work in the UK</text></a></body></html>'
    )
    page = clean_page(cleaned)
    assert render(page.nodes["4945"]) == "<a bnid=4945><text bnid=5549>Work in the UK</text></a>"
    assert page.nodes["5549"].text == "Work in the UK"


def test_pages_without_ids_are_numbered_in_document_order_whatever_is_dropped():
    html = "<html><head><script>x()</script></head><body><p>Hi</p><button>Go</button></body></html>"
    page = clean_page(html)
    # html 0, head 1, script 2, its text 3, body 4, p 5, "Hi" 6, button 7, "Go" 8
    assert render(page) == (
        "<html bnid=0><body bnid=4><p bnid=5><text bnid=6>Hi</text></p>"
        "<button bnid=7><text bnid=8>Go</text></button></body></html>"
    )
    assert render(clean_page(html)) == render(page)


def test_render_cut_closes_every_tag():
    page = clean_page(PAGE)
    short = render(page, max_chars=40)
    assert short.endswith("</body></html>") and "…" in short
    assert len(short) < len(render(page))


def test_pruned_page_keeps_the_chosen_with_ancestors_and_near_siblings():
    items = "".join(
        f'<li backend_node_id="{i}"><a backend_node_id="{100 + i}">item {i}</a></li>'
        for i in range(10, 30)
    )
    html = (
        '<html backend_node_id="1"><body backend_node_id="2">'
        f'<ul backend_node_id="3">{items}</ul></body></html>'
    )
    pruned = render_pruned(clean_page(html), ["20"], siblings=1)
    assert pruned.startswith("<html bnid=1><body bnid=2><ul bnid=3>")
    assert "item 20" in pruned and "item 19" in pruned and "item 21" in pruned
    assert "item 18" not in pruned and "item 22" not in pruned
    assert pruned.endswith("</ul></body></html>")


def test_a_chosen_body_does_not_bring_the_whole_page():
    items = "".join(f'<p backend_node_id="{i}">paragraph number {i}</p>' for i in range(10, 200))
    html = f'<html backend_node_id="1"><body backend_node_id="2">{items}</body></html>'
    pruned = render_pruned(clean_page(html), ["2", "150"], siblings=0)
    assert "paragraph number 150" in pruned and "paragraph number 20<" not in pruned


def test_bundled_mind2web_targets_survive_cleaning():
    tasks = json.loads((BUNDLED_LANDING / "mind2web" / "train_demo.json").read_text())
    for task in tasks:
        for action in task["actions"]:
            ids = [c["backend_node_id"] for c in action["pos_candidates"]]
            page = clean_page(action["raw_html"], keep=ids)
            assert all(i in page for i in ids)
            assert "<script" not in render(page) and "<style" not in render(page)


SHOP = """<html><body><header><a href="/">Home</a><a href="/login" class="l">Log in</a></header>
<main><button type="submit" id="buy" class="btn">Buy now (1)</button><div role="button">More</div>
<a href="/login" class="l">Log in</a><p>Prices include tax.</p></main></body></html>"""


def test_outer_html_is_found_exactly_then_by_attributes():
    ids, how = find_outer_html(SHOP, '<a href="/login" class="l">Log in</a>')
    assert how == "outer_html" and len(ids) == 2  # both copies are targets
    page = clean_page(SHOP)
    assert [render(page.nodes[i]) for i in ids] == [
        "<a bnid=6><text bnid=7>Log in</text></a>",
        "<a bnid=15><text bnid=16>Log in</text></a>",
    ]
    ids, how = find_outer_html(SHOP, '<button type="submit" id="buy" class="btn">Buy now</button>')
    assert how == "outer_html_attributes" and len(ids) == 1
    assert find_outer_html(SHOP, '<button id="gone">Gone</button>') == ([], None)
    assert find_outer_html(SHOP, "not html") == ([], None)


def test_interactive_elements_are_links_buttons_and_aria_widgets():
    found = interactive_elements(SHOP)
    assert [element.tag for element in found] == ["a", "a", "button", "div", "a"]
    assert found[2].attributes == {"type": "submit"}
    assert all(element.bnid in clean_page(SHOP) for element in found)


def test_xpath_finds_elements_as_a_browser_parses_the_page() -> None:
    numbered = '<table><tr><td><a @click="go" title="a\x01b">Go</a></td></tr></table><p>x</p>'
    [link] = find_xpath(numbered, "/html/body/table/tbody/tr/td/a")
    assert [e.bnid for e in interactive_elements(numbered)] == [link]
    assert find_xpath(numbered, "/html/body/table/tr/td/a") == []  # no <tbody>: not the DOM
    assert find_xpath(numbered, '//a[@title="ab"]') == [link], "control characters dropped"
    captured = '<div backend_node_id="7"><button backend_node_id="12">OK</button></div>'
    assert find_xpath(captured, "//button[text()='OK']") == ["12"]
    with pytest.raises(XPathInvalid, match="attribute values"):
        find_xpath(captured, "//button/@backend_node_id")
