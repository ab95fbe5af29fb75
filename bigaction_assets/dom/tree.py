"""Raw HTML to a compact tree: salient attributes, backend node ids, texts; no scripts or hidden.

The parser is lexbor (through selectolax): it parsed and cleaned pages several times faster than
lxml in our measurements (benchmarks/README.md, "DOM cleaning"), and it follows HTML5 parsing
rules, so malformed pages come out as a browser would see them.

Node ids (`bnid`): an element keeps the `backend_node_id` its capture gave it. A text node
inside `<text backend_node_id=...>` (Mind2Web's cleaned form) keeps that id; a bare text node
gets `<parent id>.<n>`, its position among its parent's texts, since HTML cannot carry an id on
a text. A page captured without any backend ids (the-wave) numbers every element and text of
the parsed document in order (`document_ids`), dropped ones included, so an id never depends on
what the cleaning keeps and the same page always gets the same ids.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser, LexborNode

from bigaction_assets.gc_pause import collection_paused

ID_ATTRIBUTE = "backend_node_id"
# Attributes that tell a model what an element is or holds; the rest (class, style, href, data-*,
# boxes) cost tokens and say little. Mind2Web's dumps write aria_* with underscores.
SALIENT_ATTRIBUTES = frozenset(
    {
        "alt", "aria_label", "aria-label", "aria_description", "aria-description", "aria_role",
        "label", "name", "placeholder", "role", "title", "type", "value", "input_value",
        "input_checked", "option_selected", "text_value",
    }
)  # fmt: skip
DROPPED_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "meta", "link", "title", "base"}
)
LEAF_TAGS = frozenset({"svg", "math", "iframe", "object", "canvas"})  # their insides are noise
KEPT_WHEN_EMPTY = frozenset({"input", "select", "textarea", "button"})
HIDDEN_STYLES = ("display:none", "visibility:hidden")
# attributes that can hide an element: most elements carry none, and skip the full test
_HIDING = frozenset({"hidden", "aria_hidden", "aria-hidden", "style", "type"})


@dataclass(slots=True, eq=False)
class Text:
    """A text node: whitespace collapsed, with its id."""

    bnid: str | None
    text: str


@dataclass(slots=True, eq=False)
class Element:
    """A kept element: tag, id, its salient attributes in page order, kept children."""

    tag: str
    bnid: str | None
    attributes: list[tuple[str, str]]
    children: list[Element | Text] = field(default_factory=list)


Node = Element | Text


@dataclass(slots=True)
class Page:
    """A cleaned page: its root (None when nothing is left) and every kept node by id.

    Nodes hold no parent pointers (no reference cycles: a page is freed as soon as it is
    dropped); `parents` finds them when pruning needs them.
    """

    root: Element | None
    nodes: dict[str, Node]

    def __contains__(self, bnid: str) -> bool:
        return bnid in self.nodes

    def parents(self) -> dict[int, Element]:
        """The parent of every node below the root, by `id()` of the node."""
        found: dict[int, Element] = {}
        stack = [self.root] if self.root is not None else []
        while stack:
            element = stack.pop()
            for child in element.children:
                found[id(child)] = element
                if isinstance(child, Element):
                    stack.append(child)
        return found


def is_hidden(attributes: dict[str, str | None], tag: str) -> bool:
    """Hidden by an attribute, an inline style, or as a hidden input."""
    if "hidden" in attributes:
        return True
    if (attributes.get("aria_hidden") or attributes.get("aria-hidden")) == "true":
        return True
    style = attributes.get("style")
    if style and any(h in "".join(style.split()).lower() for h in HIDDEN_STYLES):
        return True
    return tag == "input" and (attributes.get("type") or "").lower() == "hidden"


def document_ids(root: LexborNode) -> dict[int, str]:
    """Position of every element and text node in document order, by lexbor node (`mem_id`)."""
    ids: dict[int, str] = {}
    for node in root.traverse(include_text=True):
        if node.tag == "-text" or node.tag[0] != "-":
            ids[node.mem_id] = str(len(ids))
    return ids


class _Builder:
    def __init__(self, numbers: dict[int, str] | None, keep: Collection[str]) -> None:
        self.numbers = numbers  # the page has no ids of its own: ids are document positions
        self.numbered = numbers is not None
        self.keep = keep
        self.nodes: dict[str, Node] = {}

    def element(self, node: LexborNode) -> Element | None:
        tag = node.tag
        if tag in DROPPED_TAGS:
            return None
        attributes = node.attributes
        bnid = self.numbers[node.mem_id] if self.numbers else attributes.get(ID_ATTRIBUTE)
        if not _HIDING.isdisjoint(attributes) and is_hidden(attributes, tag):
            return None
        kept = [(k, v) for k, v in attributes.items() if k in SALIENT_ATTRIBUTES and v]
        element = Element(tag, bnid, kept)
        if tag not in LEAF_TAGS:
            self._children(node, element)
        if not (kept or element.children or tag in KEPT_WHEN_EMPTY or bnid in self.keep):
            return None
        if bnid is not None:
            self.nodes[bnid] = element
        return element

    def _children(self, node: LexborNode, element: Element) -> None:
        texts = 0
        for child in node.iter(include_text=True):
            tag = child.tag
            if tag == "-text":
                words = " ".join(child.text_content.split())
                if not words:
                    continue
                if self.numbers:
                    text_id = self.numbers[child.mem_id]
                else:
                    texts += 1
                    text_id = f"{element.bnid}.{texts}" if element.bnid is not None else None
                self._add(element, Text(text_id, words))
            elif tag == "text" and not self.numbered:  # Mind2Web's cleaned `<text id>words</text>`
                words = " ".join((child.text(deep=True) or "").split())
                if words:
                    self._add(element, Text(child.attributes.get(ID_ATTRIBUTE), words))
            elif tag[0] != "-":
                kept = self.element(child)
                if kept is not None:
                    element.children.append(kept)

    def _add(self, element: Element, text: Text) -> None:
        element.children.append(text)
        if text.bnid is not None:
            self.nodes[text.bnid] = text


def clean_page(html: str, keep: Collection[str] = ()) -> Page:
    """The cleaned tree of a page.

    Args:
        html: the page as captured (raw HTML, or Mind2Web's cleaned HTML).
        keep: ids of elements never dropped for being empty (the candidates of a step), so a
            target with no text or salient attribute still has a place in the page.
    """
    root = LexborHTMLParser(html).root
    numbers = document_ids(root) if root is not None and ID_ATTRIBUTE not in html else None
    builder = _Builder(numbers, keep)
    # The tree holds no reference cycles, so reference counting frees it; pausing the cyclic
    # collector while tens of thousands of nodes are made doubles throughput on large pages.
    with collection_paused():
        top = builder.element(root) if root is not None else None
    return Page(root=top, nodes=builder.nodes)
