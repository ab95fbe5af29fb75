"""Finding the elements an XPath selects, in the page as a browser parses it."""

# An XPath recorded in a browser walks the browser's tree (with the <tbody> HTML5 parsing
# adds, say), which lxml's own HTML parser does not build. So the page is parsed by lexbor, as
# everywhere else here, copied into an lxml tree, and the expression evaluated there by
# libxml2's full XPath 1.0; the elements it selects keep the ids `match` gives them.

from __future__ import annotations

import re

from lxml import etree
from selectolax.lexbor import LexborHTMLParser, LexborNode

from bigaction_assets.dom.tree import ID_ATTRIBUTE, document_ids

# characters XML (hence lxml) refuses in names, texts and attribute values
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_PLACEHOLDER_TAG = "unnamed"


class XPathInvalid(ValueError):
    """The expression is not XPath 1.0, or it selects something other than elements."""


def _element(tag: str, attributes: dict[str, str | None]) -> etree._Element:
    try:
        element = etree.Element(tag)
    except ValueError:  # a tag XML cannot name: no XPath can name it either
        element = etree.Element(_PLACEHOLDER_TAG)
    for name, value in attributes.items():
        try:
            element.set(name, _NOT_XML.sub("", value or ""))
        except ValueError:
            continue  # an attribute name XML refuses (`@click`): no XPath can test it
    return element


def _append_text(parent: etree._Element, text: str) -> None:
    text = _NOT_XML.sub("", text)
    if len(parent):
        last = parent[-1]
        last.tail = (last.tail or "") + text
    else:
        parent.text = (parent.text or "") + text


def _copy(root: LexborNode, ids: dict[int, str] | None) -> tuple[etree._Element, dict]:
    """The page as an lxml tree, and the id of each copied element."""
    top = _element(root.tag, root.attributes)
    found: dict[etree._Element, str | None] = {}
    stack = [(root, top)]
    while stack:
        node, copy = stack.pop()
        found[copy] = ids[node.mem_id] if ids is not None else node.attributes.get(ID_ATTRIBUTE)
        for child in node.iter(include_text=True):
            if child.tag == "-text":
                _append_text(copy, child.text_content or "")
            elif child.tag[0] != "-":  # comments, doctypes
                element = _element(child.tag, child.attributes)
                copy.append(element)
                stack.append((child, element))
    return top, found


def find_xpath(html: str, xpath: str) -> list[str]:
    """Ids of the page's elements `xpath` selects, in document order (`match`'s ids: the
    page's backend node ids, else document positions).

    Raises:
        XPathInvalid: the expression does not parse, or selects texts, attributes or values.
    """
    try:
        compiled = etree.XPath(xpath)
    except etree.XPathSyntaxError as exc:
        raise XPathInvalid(f"{xpath!r} is not XPath 1.0: {exc}") from None
    root = LexborHTMLParser(html).root
    if root is None:
        return []
    numbers = document_ids(root) if ID_ATTRIBUTE not in html else None
    top, ids = _copy(root, numbers)
    try:
        selected = compiled(etree.ElementTree(top))
    except etree.XPathEvalError as exc:
        raise XPathInvalid(f"{xpath!r} cannot be evaluated: {exc}") from None
    if not isinstance(selected, list):
        raise XPathInvalid(f"{xpath!r} gives a {type(selected).__name__}, not elements")
    if not all(isinstance(e, etree._Element) for e in selected):
        raise XPathInvalid(f"{xpath!r} selects texts or attribute values, not elements")
    return [ids[e] for e in selected if ids.get(e) is not None]
