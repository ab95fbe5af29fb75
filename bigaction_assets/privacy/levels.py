"""What each telemetry level keeps, field by field: an allow-list, so a field we do not know is
never stored. OFF (or no level at all) keeps nothing; LOW keeps no page content and no free
text; MED adds the texts a person or model wrote; HIGH adds page content and full prompts."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from bigaction_assets.privacy.actions import ActionLists

LEVELS = ("OFF", "LOW", "MED", "HIGH")
RANK = {level: rank for rank, level in enumerate(LEVELS)}
Spec = dict[str, "str | tuple[str, Spec]"]

_COST = (
    "world_model_input_tokens", "world_model_output_tokens", "world_model_cost",
    "action_engine_input_tokens", "action_engine_output_tokens", "action_engine_cost",
    "embedding_input_tokens", "embedding_cost", "total_step_cost",
)  # fmt: skip
OUTCOME: Spec = {
    "action_generation_time": "LOW", "navigation_engine_llm": "LOW", "success": "LOW",
    "action": "MED", "error": "MED",
    "llm_raw_response": "HIGH", "navigation_engine_full_prompt": "HIGH",
}  # fmt: skip
ENGINE_LOG: Spec = {
    "retrieval_time": "LOW", "retrieval_name": "LOW", "action_nb": "LOW", "vision_data": "LOW",
    "action_outcomes": ("LOW", OUTCOME), "navigation_engine_input": "MED",
    "retrieved_html": "HIGH",
}  # fmt: skip
RECORD: Spec = {
    **dict.fromkeys(("version", "origin", "step", "date", "engine", "success"), "LOW"),
    **dict.fromkeys(("world_model_inference_time", "llm", "multi_modal_model"), "LOW"),
    **dict.fromkeys(("viewport_size", "bounding_box", "url", "action_names", *_COST), "LOW"),
    "engine_log": ("LOW", ENGINE_LOG),
    **dict.fromkeys(("main_objective", "objectives", "objective", "instruction"), "MED"),
    **dict.fromkeys(("world_model_output", "code", "output", "error_msg", "tab_info"), "MED"),
    **dict.fromkeys(("html", "world_model_prompt", "source_nodes"), "HIGH"),
}
# Kept at no level: raw ids (replaced by pseudonyms) and screenshots (pixels cannot be scrubbed).
NEVER = ("user_id", "unique_user_id", "run_id", "screenshot", "screenshot_before_action",
         "screenshot_after_action", "screenshots")  # fmt: skip
_ACTION_CALL = re.compile(
    r"\.(click|send_keys|clear|submit|fill|type|press|hover|check|select_by_\w+|execute_script|"
    r"get|back|forward|refresh|scroll\w*|switch_to\w*)\("
)


def origin_only(url: str) -> str:
    """`https://host` of a URL: what LOW keeps of a page address."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}" if parts.scheme and host else ""


def action_names(code: str, actions: ActionLists | None = None) -> list[str]:
    """The names of the actions code takes (`click`, `setValue`), without targets or values."""
    parsed = (actions or ActionLists()).get(code)
    if parsed is not None:
        return _names_in(parsed)
    return _ACTION_CALL.findall(code)


def _names_in(value: Any) -> list[str]:
    if isinstance(value, list):
        return [name for item in value for name in _names_in(item)]
    if isinstance(value, dict):
        own = [value["name"]] if isinstance(value.get("name"), str) else []
        return own + [n for k, v in value.items() if k != "name" for n in _names_in(v)]
    return []


def keep(
    value: dict[str, Any], level: str, spec: Spec = RECORD, path: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """The fields `level` allows, and the dotted names of those dropped."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for name, item in value.items():
        rule = spec.get(name)
        where = f"{path}{name}"
        if rule is None or RANK[level] < RANK[rule if isinstance(rule, str) else rule[0]]:
            if name not in NEVER[:3]:  # raw ids leave by the envelope, not as drops
                dropped.append(where)
            continue
        if isinstance(rule, tuple) and isinstance(item, list):
            kept[name] = []
            for entry in item:
                if isinstance(entry, dict):
                    inner, lost = keep(entry, level, rule[1], f"{where}[].")
                    kept[name].append(inner)
                    dropped += lost
            continue
        kept[name] = origin_only(item) if name == "url" and level == "LOW" and item else item
    return kept, sorted(set(dropped))


def level_table() -> list[tuple[str, str]]:
    """(field, lowest level that keeps it) for the level table of docs/telemetry.md."""
    rows: list[tuple[str, str]] = []

    def walk(spec: Spec, prefix: str) -> None:
        for name, rule in spec.items():
            level = rule if isinstance(rule, str) else rule[0]
            rows.append((prefix + name, level))
            if isinstance(rule, tuple):
                walk(rule[1], f"{prefix}{name}[].")

    walk(RECORD, "")
    return rows + [(name, "never") for name in NEVER]
