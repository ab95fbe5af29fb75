"""the-wave adapter: rows to one-step episodes with their target, operation and candidates."""

from __future__ import annotations

import json

import orjson
import pytest

from bigaction_assets.sources.selenium_calls import selenium_operation
from bigaction_assets.sources.the_wave import ADAPTER
from tests.conftest import BUNDLED_LANDING, land_file, run_ingest

DEMO = BUNDLED_LANDING / "the_wave" / "test_demo.jsonl"


@pytest.fixture
def demo(tmp_path):
    landing = tmp_path / "landing"
    path = land_file(landing, "the_wave", "test_demo.jsonl", DEMO.read_bytes())
    return run_ingest(ADAPTER, "test_demo", [path], landing)


def _action(ingested, episode_id):
    return next(
        e for e in ingested.rows("events") if e["episode_id"] == episode_id and e["function"]
    )


def test_every_row_becomes_a_one_step_episode(demo):
    episodes = demo.rows("episodes")
    assert len(episodes) == 6 and not demo.rows("rejects")
    assert {e["source"] for e in episodes} == {"the-wave"}
    assert {e["source_split"] for e in episodes} == {"test"}
    assert len(demo.rows("dom_snapshots")) == 6
    for episode in episodes:
        kinds = [e["kind"] for e in demo.rows("events") if e["episode_id"] == episode["episode_id"]]
        assert kinds == ["text_observation", "web_observation", "api_action"]


def test_targets_operations_and_how_they_were_found(demo):
    by_task = {e["task"]: e["episode_id"] for e in demo.rows("episodes")}
    expected = {
        "Search for organic bananas": ("type", "organic bananas", "outer_html", 1),
        "Limit my catalog search for The Overstory to eBooks": (
            "select_option", "eBook", "outer_html", 1,
        ),
        "Subscribe to The Daily Ledger": ("click", "", "outer_html", 2),
        "Add a country sourdough loaf to my cart": ("click", "", "outer_html_attributes", 1),
        "Show SUVs only": ("click", "", None, 0),
    }  # fmt: skip
    for task, (function, value, found_by, matches) in expected.items():
        action = _action(demo, by_task[task])
        extra = orjson.loads(action["extra"])
        assert action["function"] == function
        assert (extra["value"], extra["target_found_by"], extra["target_matches"]) == (
            value,
            found_by,
            matches,
        )
        positives = [
            c
            for c in demo.rows("web_candidates")
            if c["episode_id"] == by_task[task] and c["positive"]
        ]
        assert len(positives) == matches
        assert orjson.loads(action["kwargs"])["bid"] == (
            positives[0]["backend_node_id"] if positives else None
        )


def test_episode_ids_are_stable_across_row_order(tmp_path):
    rows = DEMO.read_text().splitlines()
    reordered = "\n".join(reversed(rows)) + "\n"
    landing = tmp_path / "landing"
    path = land_file(landing, "the_wave", "test_demo.jsonl", reordered.encode())
    again = run_ingest(ADAPTER, "test_demo", [path], landing)
    first = run_ingest(ADAPTER, "test_demo", [DEMO], BUNDLED_LANDING)
    assert {e["episode_id"] for e in again.rows("episodes")} == {
        e["episode_id"] for e in first.rows("episodes")
    }


def test_bad_rows_are_rejected_with_their_reason(tmp_path):
    good = json.loads(DEMO.read_text().splitlines()[0])
    rows = [
        {k: v for k, v in good.items() if k != "selenium_ground_truth"},
        {**good, "html": 42},
        {**good, "selenium_ground_truth": "driver.back()"},
        {**good, "html": "   "},
        good,
    ]
    landing = tmp_path / "landing"
    data = "\n".join(json.dumps(row) for row in rows).encode()
    path = land_file(landing, "the_wave", "mixed.jsonl", data)
    result = run_ingest(ADAPTER, "mixed", [path], landing)
    assert [r["reason"] for r in result.rows("rejects")] == [
        "missing_field",
        "wrong_type",
        "invalid_value",
        "invalid_value",
    ]
    assert len(result.rows("episodes")) == 1


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('driver.find_element(By.ID, "q").send_keys("New York")', ("TYPE", "New York")),
        ("el.send_keys('it\\'s')", ("TYPE", "it's")),
        ('Select(el).select_by_visible_text("2 guests")', ("SELECT", "2 guests")),
        ("Select(el).select_by_value('eb')", ("SELECT", "eb")),
        ("Select(el).select_by_index(3)", ("SELECT", "3")),
        ("driver.find_element(By.LINK_TEXT, 'Go').click()", ("CLICK", "")),
    ],
)
def test_selenium_operations(code, expected):
    assert selenium_operation(code) == expected
