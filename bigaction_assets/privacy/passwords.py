"""Values typed into password fields, found from the actions (Selenium or Playwright code, YAML
or JSON action lists, BrowserGym calls) and the page they act on: a typed value is a password
when its target names a password field or is, in the page's HTML, an `<input type=password>`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import lxml.html
from lxml import etree

from bigaction_assets.privacy.actions import ActionLists, looks_like_actions
from bigaction_assets.privacy.detectors import PASSWORD_NAMES

_PASSWORD_WORD = re.compile(rf"(?i)(?:{PASSWORD_NAMES})|type\s*=\s*[\"']?password")
_HAS_PASSWORD_INPUT = re.compile(r"(?i)type\s*=\s*[\"']?password")
_TOKENS = re.compile(r"[\w-]+")
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")
_Q = r"(?P<q>[\"'])(?P<v>(?:\\.|(?!(?P=q)).)*)(?P=q)"
# `<selector>.send_keys("v")` / `.fill("v")` / `.type("v")` on one chained expression
_CHAINED = re.compile(
    rf"(?P<sel>(?:find_element|locator|query_selector|get_by_\w+|\$)\w*\((?:[^()]|\([^()]*\))*\))"
    rf"\s*\.\s*(?:send_keys|fill|type|press_sequentially)\(\s*{_Q}"
)
# `page.fill("#password", "v")`, `fill('12', 'v')` (BrowserGym bids)
_SELECTOR_FIRST = re.compile(
    rf"(?<![\w.])(?:\w+\.)?(?:fill|type|send_keys_to|set_value)\(\s*(?P<sq>[\"'])(?P<sel>.*?)(?P=sq)\s*,\s*{_Q}"
)
_ASSIGNED = re.compile(
    r"(?P<var>\w+)\s*=\s*(?P<sel>[\w.]*(?:find_element|locator|query_selector|get_by_\w+)\w*"
    r"\((?:[^()]|\([^()]*\))*\))"
)
# Literals each pattern needs, so that texts without them (most pages and prose) are skipped.
_SELECTORS = ("find_element", "locator", "query_selector", "get_by_", "$")
_TYPING = ("send_keys", "fill", "type", "press_sequentially")
_SELECTOR_FIRST_CALLS = ("fill(", "type(", "send_keys_to(", "set_value(")
_TARGET_KEYS = ("xpath", "selector", "css", "element", "target", "bid", "id", "name")
_VALUE_KEYS = ("value", "text", "keys")


class PasswordFields:
    """What the pages of one record say about password inputs: their ids, names and bids,
    and the parsed pages to evaluate an action's xpath against."""

    def __init__(self, pages: list[str]) -> None:
        self.identifiers: set[str] = set()
        self.prefilled: set[str] = set()
        self.trees: list[Any] = []
        for page in pages:
            if not _HAS_PASSWORD_INPUT.search(page):
                continue
            try:
                tree = lxml.html.fromstring(page)
            except (etree.ParserError, ValueError):
                continue
            self.trees.append(tree.getroottree())
            for element in tree.iter("input"):
                if (element.get("type") or "").lower() != "password":
                    continue
                for attribute in ("id", "name", "bid", "data-testid"):
                    if element.get(attribute):
                        self.identifiers.add(element.get(attribute))
                if element.get("value"):
                    self.prefilled.add(element.get("value"))

    def may_match(self, text: str) -> bool:
        """False when no target written in `text` can be a password field: the record's pages
        have none and the text names none (so its action list need not be parsed)."""
        return bool(self.trees or self.identifiers) or bool(_PASSWORD_WORD.search(text))

    def is_password(self, selector: str) -> bool:
        if _PASSWORD_WORD.search(selector):
            return True
        tokens = set(_TOKENS.findall(selector))
        if tokens & self.identifiers or selector in self.identifiers:
            return True
        literals = _QUOTED.findall(selector)
        return any(self._xpath_is_password(x) for x in [selector, *literals])

    def _xpath_is_password(self, selector: str) -> bool:
        if self.trees and selector.startswith(("/", "(")):
            for tree in self.trees:
                try:
                    found = tree.xpath(selector)
                except (etree.XPathError, ValueError):
                    continue
                for element in found if isinstance(found, list) else ():
                    if getattr(element, "tag", None) == "input" and (
                        (element.get("type") or "").lower() == "password"
                    ):
                        return True
        return False


def _unescape(value: str) -> str:
    return value.encode("utf-8", "backslashreplace").decode("unicode_escape", "ignore")


@lru_cache(maxsize=256)
def _typing_into(variable: str) -> re.Pattern[str]:
    """`<variable>.send_keys("v")` and the like, for an element kept in a variable."""
    return re.compile(rf"\b{re.escape(variable)}\s*\.\s*(?:send_keys|fill|type)\(\s*{_Q}")


def _has(text: str, needles: tuple[str, ...]) -> bool:
    return any(needle in text for needle in needles)


def typed_in_code(
    code: str, fields: PasswordFields, actions: ActionLists | None = None
) -> Iterator[str]:
    """Values that code types into password fields."""
    if not fields.may_match(code):
        return  # no target it names can be a password field
    selects = _has(code, _SELECTORS)
    if selects and _has(code, _TYPING):
        for match in _CHAINED.finditer(code):
            if fields.is_password(match.group("sel")):
                yield _unescape(match.group("v"))
    if _has(code, _SELECTOR_FIRST_CALLS):
        for match in _SELECTOR_FIRST.finditer(code):
            if fields.is_password(match.group("sel")):
                yield _unescape(match.group("v"))
    for assigned in _ASSIGNED.finditer(code) if selects else ():
        if not fields.is_password(assigned.group("sel")):
            continue
        for match in _typing_into(assigned.group("var")).finditer(code, assigned.end()):
            yield _unescape(match.group("v"))
    if ("args" in code or "value" in code) and looks_like_actions(code):
        yield from typed_in_actions((actions or ActionLists()).get(code), fields)


def typed_in_actions(actions: Any, fields: PasswordFields) -> Iterator[str]:
    """Values of structured actions (`{name, args: {xpath, value}}`) aimed at password fields."""
    if isinstance(actions, list):
        for item in actions:
            yield from typed_in_actions(item, fields)
        return
    if not isinstance(actions, dict):
        return
    targets = [str(actions[k]) for k in _TARGET_KEYS if isinstance(actions.get(k), str | int)]
    values = [actions[k] for k in _VALUE_KEYS if isinstance(actions.get(k), str)]
    if values and any(fields.is_password(target) for target in targets):
        yield from values
    for nested in actions.values():
        if isinstance(nested, dict | list):
            yield from typed_in_actions(nested, fields)


def nested_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from nested_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from nested_strings(item)


def password_values(record: Any, actions: ActionLists | None = None) -> set[str]:
    """Every value typed into (or prefilled in) a password field anywhere in the record."""
    actions = actions or ActionLists()
    strings = list(dict.fromkeys(nested_strings(record)))  # a record repeats its action and page
    fields = PasswordFields([s for s in strings if "<input" in s or "<INPUT" in s])
    found = set(fields.prefilled)
    for text in strings:
        if "(" in text or "args" in text or "value" in text:
            found.update(typed_in_code(text, fields, actions))
    return {value for value in found if value}
