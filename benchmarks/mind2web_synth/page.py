"""A captured page as Mind2Web dumps it: raw_html, cleaned_html and candidates, from one tree."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Union

Node = tuple[str, dict[str, str], list[Union["Node", str]]]

HIDDEN = "display:none"  # a subtree with this style has no box at capture time
RAW_ONLY = frozenset({"script", "style", "path"})  # never shown, never in cleaned_html
VOID = frozenset({"input", "img", "path"})
CLICKABLE = frozenset({"a", "button", "input", "select"})
INLINE = frozenset({"a", "button", "span", "label", "img", "input", "select", "svg", "strong"})
# Attributes Mind2Web keeps in cleaned_html, and those a candidate's `attributes` JSON holds.
SALIENT = frozenset(
    {"alt", "aria_label", "input_value", "name", "placeholder", "role", "title", "type", "value"}
)
CANDIDATE_KEYS = frozenset(
    {"backend_node_id", "bounding_box_rect", "class", "id", "name", "aria_label", "type",
     "value", "placeholder", "role", "alt", "title", "is_clickable",
     "data_pw_testid_buckeye_candidate"}
)  # fmt: skip
LEAF_HEIGHT = {"a": 24, "button": 40, "input": 44, "select": 40, "img": 64, "svg": 24, "p": 26}


def h(tag: str, attrs: dict[str, str] | None = None, *children: Node | str | None) -> Node:
    """An element; None children are left out."""
    return (tag, attrs or {}, [c for c in children if c is not None])


@dataclass(frozen=True, slots=True)
class Target:
    """An element an action can target.

    Attributes:
        kind: click, type or select.
        element: the target as `action_reprs` names it, e.g. `[button]  Search`.
        slot: an input's name: its typed value comes from the task's slot of that name.
        candidate: its index in `Page.candidates`; -1 when it is hidden at capture time.
    """

    nid: int
    kind: str
    element: str
    options: tuple[str, ...]
    slot: str | None
    candidate: int


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _num(value: float) -> str:
    return str(int(value)) if value == int(value) else str(value)


def _role(tag: str, attrs: dict[str, str]) -> str:
    """The element kind Mind2Web prints in brackets in `action_reprs`."""
    kind = attrs.get("type", "text")
    if "role" in attrs:
        return attrs["role"]
    if tag != "input":
        return {"a": "link", "select": "combobox"}.get(tag, tag)
    if kind in ("submit", "button", "checkbox"):
        return "button" if kind != "checkbox" else kind
    return "searchbox" if kind == "search" else "textbox"


@dataclass
class Page:
    """A page being written block by block, with node ids in document order."""

    rng: random.Random
    next_id: int
    raw: list[str] = field(default_factory=list)
    cleaned: list[str] = field(default_factory=list)
    candidates: list[tuple[int, str, dict[str, str]]] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    raw_size: int = 0
    cleaned_size: int = 0
    y: float = 0.0

    def new_id(self) -> int:
        """The next backend node id, with the gaps a real DOM leaves now and then."""
        nid = self.next_id
        self.next_id += 1 + (self.rng.randint(1, 3) if self.rng.random() < 0.3 else 0)
        return nid

    def put(self, text: str) -> None:
        self.raw.append(text)
        self.raw_size += len(text)

    def add(self, node: Node, depth: int = 2) -> None:
        """Append a block below the previous one (a block of the head takes no room)."""
        height, _ = self._element(node, depth, 0.0, self.y, 1280.0, True)
        self.y += height + 16 if height else 0

    def candidate(self, index: int, **extra: Any) -> dict[str, Any]:
        """Candidate `index` as Mind2Web lists it."""
        nid, tag, attrs = self.candidates[index]
        return {"tag": tag, "attributes": json.dumps(attrs), "backend_node_id": str(nid), **extra}

    def _element(
        self, node: Node, depth: int, x: float, y: float, width: float, shown: bool
    ) -> tuple[float, str]:
        """Write one element and its subtree; returns its height and its text (what names it in
        `action_reprs`, shown or not)."""
        tag, attrs, children = node
        nid = self.new_id()
        shown = shown and tag not in RAW_ONLY and attrs.get("style") != HIDDEN
        start, clean_start, candidate = len(self.raw), len(self.cleaned), -1
        self.raw.append("")  # the start tag, once the box is known
        if shown:
            self.cleaned.append("")
            if tag != "option":
                candidate = len(self.candidates)
                self.candidates.append((nid, tag, {}))
        pad = "  " * depth
        inset = 8.0 if tag in ("section", "form", "header", "footer", "article") else 0.0
        cy, texts = y + inset, []
        for child in children:
            if isinstance(child, str):
                if tag in RAW_ONLY:
                    self.put(child)
                    continue
                tid = self.new_id()
                self.put(_text(child))
                texts.append(child)
                if shown:
                    line = f'{pad}  <text backend_node_id="{tid}">{_text(child)}</text>'
                    self.cleaned.append(line)
                    self.cleaned_size += len(line) + 1
                    cy += 21
            else:
                inner_width = width - 2 * inset
                child_height, text = self._element(
                    child, depth + 1, x + inset, cy, inner_width, shown
                )
                cy += child_height + (8 if child_height else 0)
                texts.append(text)
        text = " ".join(t for t in texts if t)
        if tag in INLINE:
            width = min(width, max(24.0, 7.5 * len(text) + (32 if tag == "button" else 0)))
        height = max(cy - y + inset, LEAF_HEIGHT.get(tag, 0)) if shown else 0.0
        pairs = {"backend_node_id": str(nid)}
        if shown:
            pairs["bounding_box_rect"] = f"{_num(x)},{_num(y)},{_num(width)},{_num(height)}"
        pairs.update(attrs)
        if tag == "input" and attrs.get("value") and attrs.get("type") != "checkbox":
            pairs["input_value"] = attrs["value"]
        if shown and (tag in CLICKABLE or attrs.get("role") == "option"):
            pairs["is_clickable"] = "true"
        if candidate >= 0:
            pairs["data_pw_testid_buckeye_candidate"] = "1"
            self.candidates[candidate][2].update(
                (k, v) for k, v in pairs.items() if k in CANDIDATE_KEYS
            )
        tag_text = " ".join(f'{k}="{_attr(v)}"' for k, v in pairs.items())
        void = tag in VOID and not children
        self.raw[start] = f"<{tag} {tag_text}{'/' if void else ''}>"
        self.raw_size += len(self.raw[start])
        if not void:
            self.put(f"</{tag}>")
        if shown:
            salient = "".join(f' {k}="{_attr(v)}"' for k, v in pairs.items() if k in SALIENT)
            inner = len(self.cleaned) > clean_start + 1
            opening = f'{pad}<{tag} backend_node_id="{nid}"{salient}{"" if inner else "/"}>'
            self.cleaned[clean_start] = opening
            self.cleaned_size += len(opening) + 1
            if inner:
                self.cleaned.append(f"{pad}</{tag}>")
                self.cleaned_size += len(tag) + len(pad) + 4
        self._target(nid, tag, attrs, text, children, candidate)
        return height, text

    def _target(
        self, nid: int, tag: str, attrs: dict[str, str], text: str, children: list[Any], at: int
    ) -> None:
        """Note the element as a target if an action can use it."""
        if tag == "select":
            kind = "select"
        elif tag == "input" and attrs.get("type", "text") in ("text", "search"):
            kind = "type"
        elif tag in ("a", "button", "input") or attrs.get("role") == "option":
            kind = "click"
        else:
            return
        label = "" if tag == "select" else text
        for key in ("aria_label", "placeholder", "alt", "title", "name"):
            label = label or attrs.get(key, "")
        options = tuple(c[2][0] for c in children if isinstance(c, tuple) and c[2])
        slot = attrs.get("name") if kind == "type" else None
        element = f"[{_role(tag, attrs)}]  {label}"
        self.targets.append(Target(nid, kind, element, options, slot, at))
