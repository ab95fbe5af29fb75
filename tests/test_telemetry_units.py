"""Small pure pieces of telemetry: levels, pseudonym keys, the collector's refusal to start."""

# ruff: noqa: E501 - long literal expectations read better whole

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bigaction_assets.privacy.levels import keep, level_table
from bigaction_assets.privacy.pseudonyms import DEV_KEY, KEY_ENV, MissingKey, Pseudonymizer

ROOT = Path(__file__).resolve().parents[1]
FULL = {
    "version": "1.2.3", "origin": "lavague", "step": 3, "engine": "Navigation Engine",
    "url": "https://shop.example.com/cart?email=a%40b.com", "objective": "Buy a mug",
    "world_model_output": "Thoughts: buy", "code": "driver.get('x')", "html": "<p>hi</p>",
    "tab_info": "Tab 0", "screenshot": "iVBOR", "total_step_cost": 0.1, "mystery": "?",
    "action_names": ["get"],
    "engine_log": [{"retrieval_time": 0.4, "retrieved_html": ["<p/>"], "navigation_engine_input": "x",
                    "action_outcomes": [{"success": True, "action": "click", "llm_raw_response": "r"}]}],
}  # fmt: skip


def test_low_keeps_no_page_content_and_no_free_text() -> None:
    kept, dropped = keep(FULL, "LOW")
    assert kept == {
        "version": "1.2.3", "origin": "lavague", "step": 3, "engine": "Navigation Engine",
        "url": "https://shop.example.com", "total_step_cost": 0.1, "action_names": ["get"],
        "engine_log": [{"retrieval_time": 0.4, "action_outcomes": [{"success": True}]}],
    }  # fmt: skip
    assert {"objective", "html", "code", "screenshot", "mystery"} <= set(dropped)


def test_med_adds_texts_and_high_adds_pages_never_screenshots() -> None:
    med, _ = keep(FULL, "MED")
    high, dropped = keep(FULL, "HIGH")
    assert {"objective", "world_model_output", "code", "tab_info"} <= set(med) and "html" not in med
    assert med["url"] == FULL["url"]
    assert "html" in high and high["engine_log"][0]["retrieved_html"] == ["<p/>"]
    assert "screenshot" in dropped and "mystery" in dropped


def _documented_levels() -> dict[str, str]:
    """The level table of docs/telemetry.md: each level's row (`LOW`, `MED`, `HIGH`, `never`)."""
    section = (ROOT / "docs" / "telemetry.md").read_text()
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].strip("`") in ("LOW", "MED", "HIGH", "never"):
            rows[cells[0].strip("`")] = cells[1]
    return rows


def test_the_documented_level_table_says_what_levels_py_keeps() -> None:
    rows = _documented_levels()
    assert set(rows) == {"LOW", "MED", "HIGH", "never"}
    for field, level in level_table():
        name = field.rsplit(".", 1)[-1].removesuffix("[]")
        listed = {lvl for lvl, text in rows.items() if re.search(rf"`[^`]*\b{name}\b[^`]*`", text)}
        assert level in listed, (
            f"{field} is kept from {level}, but the README lists it under {listed}"
        )


def test_pseudonyms_need_a_key_unless_development_mode(monkeypatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(MissingKey):
        Pseudonymizer.from_env()
    assert Pseudonymizer.from_env(dev=True).dev
    monkeypatch.setenv(KEY_ENV, "short")
    with pytest.raises(MissingKey):
        Pseudonymizer.from_env()
    monkeypatch.setenv(KEY_ENV, "a-long-enough-secret-key")
    one = Pseudonymizer.from_env()
    assert (
        one.user("u")
        == Pseudonymizer(b"a-long-enough-secret-key").user("u")
        != Pseudonymizer(DEV_KEY.encode()).user("u")
    )
    assert len(one.user("u")) == 32 and one.user("u") != one.user("v")


def test_the_collector_refuses_to_start_without_a_key(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    result = subprocess.run(
        [sys.executable, "-m", "bigaction_assets.collector", "--port", "0", "--landing", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and KEY_ENV in result.stderr


def test_forget_command_records_a_pseudonymized_request(tmp_path) -> None:
    env = {**os.environ, KEY_ENV: "a-long-enough-secret-key"}
    result = subprocess.run(
        [sys.executable, "-m", "bigaction_assets.privacy.forget", "my-anon-id", "--landing", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (request,) = (tmp_path / "forget").iterdir()
    assert request.stem == Pseudonymizer(b"a-long-enough-secret-key").user("my-anon-id")
    assert "my-anon-id" not in request.read_text()
