"""Finding elements of a page: the ones an outer-HTML snippet describes, and interactive ones.

Ids are those `clean_page` gives the same page (its backend ids, else document positions), so
what is found here can be pointed at in the cleaned tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from bigaction_assets.dom.tree import ID_ATTRIBUTE, SALIENT_ATTRIBUTES, document_ids

INTERACTIVE_TAGS = frozenset({"a", "button", "input", "select", "textarea", "summary", "option"})
INTERACTIVE_ROLES = frozenset(
    {"button", "link", "checkbox", "radio", "tab", "menuitem", "option", "combobox", "textbox",
     "switch", "searchbox"}
)  # fmt: skip
# HTML5 parsing drops these outside their containers; a snippet of one is parsed inside them.
_WRAPPERS = {"td": "<table><tr>{}</tr></table>", "th": "<table><tr>{}</tr></table>",
             "tr": "<table>{}</table>", "option": "<select>{}</select>"}  # fmt: skip


@dataclass(frozen=True)
class Found:
    """An element of a page: its id, tag and salient attributes."""

    bnid: str
    tag: str
    attributes: dict[str, str]


def _words(node: LexborNode) -> str:
    return " ".join((node.text(deep=True) or "").split())


def _signature(node: LexborNode, with_text: bool) -> tuple[object, ...]:
    attributes = tuple(sorted((k, v or "") for k, v in node.attributes.items()))
    return (node.tag, attributes, _words(node) if with_text else None)


def _elements(html: str) -> Iterator[tuple[str | None, LexborNode]]:
    root = LexborHTMLParser(html).root
    if root is None:
        return
    numbers = document_ids(root) if ID_ATTRIBUTE not in html else None
    for node in root.traverse(include_text=False):
        if node.tag[0] == "-":
            continue
        bnid = numbers[node.mem_id] if numbers else node.attributes.get(ID_ATTRIBUTE)
        yield bnid, node


def snippet_element(outer_html: str) -> LexborNode | None:
    """The first element an outer-HTML snippet holds."""
    text = outer_html.strip()
    tag = text[1:].split(maxsplit=1)[0].rstrip(">/").lower() if text.startswith("<") else ""
    parsed = LexborHTMLParser(_WRAPPERS.get(tag, "{}").format(text))
    if parsed.body is None:
        return None
    return next((n for n in parsed.body.traverse() if n.tag == tag), None) if tag else None


def find_outer_html(html: str, outer_html: str) -> tuple[list[str], str | None]:
    """Ids of the page's elements the snippet describes, and how they were matched.

    Same tag, attributes and text first (`outer_html`); failing that, same tag and attributes
    (`outer_html_attributes`: the text changed after capture); else nothing (`None`).
    """
    wanted = snippet_element(outer_html)
    if wanted is None:
        return [], None
    elements = [(bnid, node) for bnid, node in _elements(html) if node.tag == wanted.tag]
    for with_text, how in ((True, "outer_html"), (False, "outer_html_attributes")):
        signature = _signature(wanted, with_text)
        found = [
            b for b, node in elements if b is not None and _signature(node, with_text) == signature
        ]
        if found:
            return found, how
    return [], None


def interactive_elements(html: str) -> list[Found]:
    """Elements a user can act on (links, buttons, fields, ARIA widgets), in page order."""
    found = []
    for bnid, node in _elements(html):
        attributes = node.attributes
        if bnid is None:
            continue
        if (
            node.tag in INTERACTIVE_TAGS
            or (attributes.get("role") or "") in INTERACTIVE_ROLES
            or "onclick" in attributes
        ):
            kept = {k: v for k, v in attributes.items() if k in SALIENT_ATTRIBUTES and v}
            found.append(Found(bnid, node.tag, kept))
    return found
