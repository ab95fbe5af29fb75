"""Tool specs (JSON-schema functions) and the registry of action spaces an episode can use."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

JsonSchema = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    """One function an agent may call: its name, what it does and its JSON-schema parameters."""

    name: str
    description: str
    properties: Mapping[str, JsonSchema] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    @property
    def parameters(self) -> JsonSchema:
        return {
            "type": "object",
            "properties": {key: dict(value) for key, value in self.properties.items()},
            "required": list(self.required),
        }

    @cached_property
    def _function(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    def as_function(self) -> dict[str, Any]:
        """`{name, description, parameters}`, the shape LLaMA-Factory's `tools` lists.

        Every example renders its tools, so the dict is built once per spec and shared:
        treat it as read-only.
        """
        return self._function

    @cached_property
    def function_json(self) -> str:
        """`as_function()` as JSON text (`json.dumps`, non-ASCII kept), made once per spec."""
        return json.dumps(self._function, ensure_ascii=False)

    def as_openai_tool(self) -> dict[str, Any]:
        return {"type": "function", "function": self._function}

    def parameter_type(self, parameter: str) -> str | list[str] | None:
        schema = self.properties.get(parameter)
        return None if schema is None else schema.get("type")

    def accepts(self, argument_names: Iterable[str]) -> bool:
        """Whether a call with these argument names fits this spec."""
        return set(argument_names) <= set(self.properties)


class ToolSet(tuple[ToolSpec, ...]):
    """An episode's tools, in order (`tools_for_calls`), with their key made once: every
    window and format of the episode shows them, and looks them up by it."""

    @cached_property
    def key(self) -> tuple[str, ...]:
        return tuple(spec.function_json for spec in self)


def tool_set_key(tools: Sequence[ToolSpec]) -> tuple[str, ...]:
    """The functions' JSON texts in order: what tells one tool set from another, so what a
    format makes of a set is made once per set (most episodes of a dataset offer the same)."""
    if isinstance(tools, ToolSet):
        return tools.key
    return tuple(spec.function_json for spec in tools)


T = TypeVar("T")
TOOL_SETS_REMEMBERED = 4_096


def once_per_tool_set(
    memo: dict[Any, T], key: Any, make: Callable[[], T], limit: int = TOOL_SETS_REMEMBERED
) -> T:
    """`memo[key]`, made by `make()` the first time; the memo is emptied when it holds `limit`
    keys, so memory stays bounded whatever the sets."""
    known = memo.get(key)
    if known is None:
        if len(memo) >= limit:
            memo.clear()
        known = memo[key] = make()
    return known


_openai_tool_lists: dict[tuple[str, ...], list[dict[str, Any]]] = {}


def openai_tools(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """The tools as OpenAI's `tools` field lists them, made once per tool set and shared by
    every example that shows them: treat it as read-only."""
    return once_per_tool_set(
        _openai_tool_lists, tool_set_key(tools), lambda: [spec.as_openai_tool() for spec in tools]
    )


def _string(description: str) -> JsonSchema:
    return {"type": "string", "description": description}


_BID = _string("Id of the element on the page (whole, as the observation shows it).")


def _spec(name: str, description: str, required: tuple[str, ...] = (), **props: Any) -> ToolSpec:
    return ToolSpec(name, description, props, required)


BROWSER_TOOLS: tuple[ToolSpec, ...] = (
    _spec("click", "Click an element.", ("bid",), bid=_BID),
    _spec("dblclick", "Double-click an element.", ("bid",), bid=_BID),
    _spec("hover", "Hover over an element.", ("bid",), bid=_BID),
    _spec("focus", "Focus an element.", ("bid",), bid=_BID),
    _spec("clear", "Clear an input field.", ("bid",), bid=_BID),
    _spec(
        "fill",
        "Fill a form field with a value.",
        ("bid", "value"),
        bid=_BID,
        value=_string("Text to enter."),
    ),
    _spec(
        "type",
        "Type text into an element, optionally pressing Enter after.",
        ("bid", "text"),
        bid=_BID,
        text=_string("Text to type."),
        press_enter_after={"type": "integer", "enum": [0, 1], "description": "1 to press Enter."},
    ),
    _spec(
        "select_option",
        "Select one or more options of a <select> element.",
        ("bid", "options"),
        bid=_BID,
        options={
            "type": ["string", "array"],
            "items": {"type": "string"},
            "description": "Option value(s) or label(s).",
        },
    ),
    _spec(
        "press",
        "Press a key combination, on an element if one is given.",
        ("key_comb",),
        bid=_BID,
        key_comb=_string("Keys, e.g. Enter or Control+a."),
    ),
    _spec("keyboard_press", "Press a key combination.", ("key",), key=_string("Keys to press.")),
    _spec(
        "scroll",
        "Scroll the page.",
        (),
        direction=_string("up or down."),
        delta_x={"type": "number", "description": "Pixels to the right."},
        delta_y={"type": "number", "description": "Pixels down."},
    ),
    _spec("goto", "Navigate to a URL.", ("url",), url=_string("The URL.")),
    _spec("go_back", "Go back to the previous page."),
    _spec("go_forward", "Go forward to the next page."),
    _spec("new_tab", "Open a new tab, at a URL if one is given.", (), url=_string("The URL.")),
    _spec(
        "tab_focus",
        "Focus the tab with this number.",
        ("page_number",),
        page_number={"type": "integer", "description": "Tab number, from 0."},
    ),
    _spec("close_tab", "Close the current tab."),
    _spec(
        "noop",
        "Do nothing, optionally wait.",
        (),
        wait_ms={"type": "number", "description": "Milliseconds to wait."},
    ),
    _spec(
        "stop", "Stop, giving the answer if the task asks for one.", (), answer=_string("Answer.")
    ),
)
CODE_TOOLS: dict[str, ToolSpec] = {
    "bash": _spec(
        "execute_bash",
        "Run a bash command in a persistent shell.",
        ("command",),
        command=_string("The command."),
    ),
    "python": _spec(
        "execute_ipython_cell",
        "Run Python code in an IPython kernel.",
        ("code",),
        code=_string("The code."),
    ),
}
CODE_TOOLS["ipython"] = CODE_TOOLS["python"]
FINISH_TOOL = _spec(
    "finish",
    "Finish the task with a final message to the user.",
    ("message",),
    message=_string("Final message or answer."),
    # OpenHands' finish tool spells it so; we fill it only where the source records the outcome
    task_completed={
        "type": "string",
        "enum": ["true", "false", "partial"],
        "description": "Whether the task was completed.",
    },
)
ACTION_SPACES: dict[str, tuple[ToolSpec, ...]] = {
    "browser": BROWSER_TOOLS,
    "finish": (FINISH_TOOL,),
}
KNOWN_TOOLS: dict[str, ToolSpec] = {
    spec.name: spec for spec in (*BROWSER_TOOLS, *CODE_TOOLS.values(), FINISH_TOOL)
}
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def code_tool(language: str | None) -> ToolSpec:
    """The execution tool for a code_action's language; unknown languages get their own tool."""
    key = (language or "bash").lower()
    if key in CODE_TOOLS:
        return CODE_TOOLS[key]
    return _spec(f"execute_{key}", f"Run {key} code.", ("code",), code=_string(f"The {key} code."))


def json_type(value: Any) -> str | None:
    for python_type, name in _JSON_TYPES:
        if isinstance(value, python_type):
            return name
    return None


def infer_spec(name: str, calls: Iterable[Mapping[str, Any]]) -> ToolSpec:
    """A spec for a function no action space knows, from the arguments it was called with."""
    calls = list(calls)
    properties: dict[str, JsonSchema] = {}
    for arguments in calls:
        for key, value in arguments.items():
            inferred = json_type(value)
            properties.setdefault(key, {"type": inferred} if inferred else {})
    required = tuple(key for key in properties if all(key in call for call in calls))
    return ToolSpec(
        name, f"The `{name}` function, as the source data calls it.", properties, required
    )


def tools_for_calls(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> ToolSet:
    """The tools an episode offers: the whole action space of each known function it calls,
    plus inferred specs for the rest, in order of first use."""
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for name, arguments in calls:
        by_name.setdefault(name, []).append(arguments)
    tools: dict[str, ToolSpec] = {}
    for name, arguments in by_name.items():
        known = KNOWN_TOOLS.get(name)
        if known is not None and all(known.accepts(call) for call in arguments):
            space = next((s for s in ACTION_SPACES.values() if known in s), (known,))
            for spec in space:
                tools.setdefault(spec.name, spec)
        else:
            tools[name] = infer_spec(name, arguments)
    return ToolSet(tools.values())
