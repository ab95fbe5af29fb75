"""A tolerant reader of ELEMENT / ACTION / VALUE answers to the grounding turn.

Models wrap the three lines in markdown, quotes, trailing periods and chatter ("ELEMENT: H.
<button ...>", "**Element:** (AB)", "VALUE: None."). The last ELEMENT line wins, since models
often restate the format before answering it; ACTION is one of CLICK, TYPE, SELECT; a VALUE of
None (any case) or an empty one means no value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ACTIONS = ("CLICK", "TYPE", "SELECT")
# `**ELEMENT:** H`, `Element - (H)`, `ELEMENT: "AB".`: a field name, a separator, the rest of
# the line. Markdown emphasis around the name or the value is skipped.
_FIELD = re.compile(
    r"^[\s>*_#`-]*(ELEMENT|ACTION|VALUE)[\s*_`]*[:=\-][\s*_`]*(.*?)[\s*_`]*$",
    re.IGNORECASE | re.MULTILINE,
)
_LABEL = re.compile(r"^[\s\"'(\[{<`]*([A-Za-z]{1,3})(?=$|[\s\"')\]}>.,:;`]|$)")
_NONE_VALUES = {"", "none", "n/a", "na", "null", "nothing", "empty"}
_QUOTES = "\"'`“”‘’"


@dataclass(frozen=True)
class Answer:
    """What a reply chose: a choice label, an action and a value; None where it did not say."""

    element: str | None
    action: str | None
    value: str

    @property
    def complete(self) -> bool:
        return self.element is not None and self.action is not None


def _last(fields: list[tuple[str, str]], name: str) -> str | None:
    found = [value for key, value in fields if key.upper() == name]
    return found[-1] if found else None


def parse_label(text: str | None) -> str | None:
    """`H`, `(AB)`, `"C".`, `H. <button ...>` → the capital letters; None when there are none."""
    if text is None:
        return None
    found = _LABEL.match(text)
    if found is None:
        return None
    label = found.group(1)
    # one to three letters: a lower-case word such as "the" or "none" is not a label
    return label if label.isupper() or len(label) == 1 else None


def parse_action(text: str | None) -> str | None:
    if text is None:
        return None
    words = re.findall(r"[A-Za-z]+", text.upper())
    return next((word for word in words if word in ACTIONS), None)


def parse_value(text: str | None) -> str:
    if text is None:
        return ""
    value = text.strip()
    if len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
        value = value[1:-1].strip()
    elif value.endswith(".") and not value.endswith(".."):
        value = value[:-1].rstrip()
        if len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
            value = value[1:-1].strip()
    return "" if value.lower().strip(".") in _NONE_VALUES else value


def parse_answer(reply: str) -> Answer:
    """The ELEMENT, ACTION and VALUE a reply ends with."""
    fields = [(m.group(1), m.group(2)) for m in _FIELD.finditer(reply or "")]
    label = parse_label(_last(fields, "ELEMENT"))
    return Answer(
        element=label.upper() if label else None,
        action=parse_action(_last(fields, "ACTION")),
        value=parse_value(_last(fields, "VALUE")),
    )
