"""The cleaned tree as compact text: whole, cut to a size, or pruned around chosen elements.

`<a bnid=4945><text bnid=5549>Work in the UK</text></a>`: one tag per element with its id and
salient attributes, texts as `<text>` nodes, no whitespace between tags. A candidate is rendered
the same way as the page it sits in, so a model can find it there.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from bigaction_assets.dom.tree import Element, Node, Page, Text

_BARE_VALUE = re.compile(r"^[A-Za-z0-9_.:/#+-]+$")
ELLIPSIS = "…"
SIBLING_CHARS = 160  # a nearby sibling is context, not a choice: a glimpse is enough
WHOLE_CHARS = 2_000  # a chosen element larger than this (a `<body>`) shows only its tag


def _value(value: str) -> str:
    if _BARE_VALUE.match(value):
        return value
    return '"' + value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;") + '"'


def _text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _open(element: Element) -> str:
    parts = [element.tag]
    if element.bnid is not None:
        parts.append(f"bnid={element.bnid}")
    parts += [f"{key}={_value(value)}" for key, value in element.attributes]
    return "<" + " ".join(parts)


def _text_node(text: Text) -> str:
    head = "<text" if text.bnid is None else f"<text bnid={text.bnid}"
    return f"{head}>{_text(text.text)}</text>"


class _Writer:
    """Appends tags to `out` until `budget` characters are written, then only closes tags."""

    def __init__(self, budget: int | None) -> None:
        self.out: list[str] = []
        self.left = budget if budget is not None else -1
        self.limited = budget is not None
        self.cut = False

    def _spend(self, piece: str) -> None:
        self.out.append(piece)
        if self.limited:
            self.left -= len(piece)

    def full(self, node: Node) -> None:
        if self.limited and self.left <= 0:
            if not self.cut:
                self.out.append(ELLIPSIS)
                self.cut = True
            return
        if isinstance(node, Text):
            self._spend(_text_node(node))
            return
        head = _open(node)
        if not node.children:
            self._spend(head + "/>")
            return
        self._spend(head + ">")
        for child in node.children:
            self.full(child)
        self.out.append(f"</{node.tag}>")


def render(node: Node | Page | None, max_chars: int | None = None) -> str:
    """A node's subtree (a page's whole tree), cut with `…` past `max_chars` characters."""
    if isinstance(node, Page):
        node = node.root
    if node is None:
        return ""
    writer = _Writer(max_chars)
    writer.full(node)
    return "".join(writer.out)


def _ancestors(node: Node, parents: dict[int, Element]) -> list[Element]:
    path = []
    parent = parents.get(id(node))
    while parent is not None:
        path.append(parent)
        parent = parents.get(id(parent))
    return path


def render_pruned(page: Page, ids: Collection[str], siblings: int = 2) -> str:
    """The page cut down to the elements `ids` name: each whole, with its ancestors (tags only)
    and up to `siblings` nearest siblings on each side (a short glimpse of each).

    A chosen element too large to show whole (a `<body>` among the candidates) is shown like an
    ancestor: its tag, around whatever else is shown inside it.
    """
    chosen = [page.nodes[i] for i in ids if i in page.nodes]
    if page.root is None or not chosen:
        return ""
    whole = {id(node) for node in chosen}
    glimpse: set[int] = set()
    path: set[int] = set()
    parents = page.parents()
    for node in chosen:
        ancestors = _ancestors(node, parents)
        path.update(id(a) for a in ancestors)
        if ancestors:
            family = ancestors[0].children
            at = next(i for i, child in enumerate(family) if child is node)
            near = family[max(0, at - siblings) : at] + family[at + 1 : at + 1 + siblings]
            glimpse.update(id(sibling) for sibling in near)
    out: list[str] = []

    def walk(node: Node) -> None:
        key = id(node)
        if key in whole:
            writer = _Writer(WHOLE_CHARS)
            writer.full(node)
            if not writer.cut:
                out.append("".join(writer.out))
                return
        if (key in path or key in whole) and isinstance(node, Element):
            out.append(_open(node) + ">")
            for child in node.children:
                walk(child)
            out.append(f"</{node.tag}>")
        elif key in glimpse:
            out.append(render(node, SIBLING_CHARS))

    walk(page.root)
    return "".join(out)
