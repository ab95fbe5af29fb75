"""Action lists as agents write them (LaVague's YAML `- actions: [{action: {name, args}}]`, or
JSON): parsed with libyaml, and once per distinct text of a record, though a record repeats its
action in `code`, `engine_log[].action` and the model's raw answer."""

from __future__ import annotations

from typing import Any

import orjson
import yaml

# libyaml's parser is ~10x faster than the pure-Python one; both build the same values.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def looks_like_actions(text: str) -> bool:
    return text.lstrip().startswith(("-", "[", "{"))


def load_actions(text: str) -> Any:
    """The parsed action list (YAML is a superset of JSON), or None when it is not one."""
    if not looks_like_actions(text):
        return None
    if text.lstrip().startswith(("[", "{")):
        try:
            return orjson.loads(text)  # most JSON lists: same value, 50x faster than YAML
        except orjson.JSONDecodeError:
            pass
    try:
        return yaml.load(text.strip(), Loader=_LOADER)  # a safe loader: plain values only
    except yaml.YAMLError:
        return None


class ActionLists:
    """Parsed action lists of one record, by text; values are shared: read them, never change
    them."""

    def __init__(self) -> None:
        self._parsed: dict[str, Any] = {}

    def get(self, text: str) -> Any:
        if text not in self._parsed:
            self._parsed[text] = load_actions(text)
        return self._parsed[text]
