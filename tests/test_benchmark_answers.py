"""Answer parsing (on every real answer we have), choice labels and the prompt templates."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bigaction_assets.benchmark.answers import Answer, parse_answer
from bigaction_assets.benchmark.prompts import (
    NONE_OF_THE_OTHERS,
    choice_label,
    label_index,
    step_prompts,
)
from tests.conftest import FIXTURES

SEEACT_PREDICTIONS = FIXTURES / "mind2web" / "seeact_predictions.jsonl"
# What a person reads at the end of each grounding answer in that file.
REAL_FINAL_ANSWERS = [("H", "CLICK", ""), ("R", "CLICK", ""), ("R", "CLICK", "")]


def test_every_real_answer_parses():
    records = [json.loads(line) for line in SEEACT_PREDICTIONS.read_text().splitlines()]
    assert len(records) == len(REAL_FINAL_ANSWERS)
    for record, expected in zip(records, REAL_FINAL_ANSWERS, strict=True):
        describe, ground = record["gpt_output"]
        answer = parse_answer(ground)
        assert (answer.element, answer.action, answer.value) == expected
        assert answer.complete
        # turn one describes the action in words and has no final answer lines
        assert parse_answer(describe) == Answer(element=None, action=None, value="")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("ELEMENT: B\nACTION: TYPE\nVALUE: New York", ("B", "TYPE", "New York")),
        ('**ELEMENT:** (AB)\n**ACTION:** Type\n**VALUE:** "New York".', ("AB", "TYPE", "New York")),
        ("Element: h. <button id=7>\nAction: click.\nValue: None.", ("H", "CLICK", "")),
        ("ELEMENT: 'C'\nACTION: SELECT\nVALUE: 2 tickets", ("C", "SELECT", "2 tickets")),
        ("ELEMENT: [D]\nACTION: CLICK\nVALUE: N/A", ("D", "CLICK", "")),
        ("Format:\nELEMENT: The uppercase letter\nELEMENT: E\nACTION: CLICK", ("E", "CLICK", "")),
        ("ELEMENT: the search button\nACTION: CLICK", (None, "CLICK", "")),
        ("ELEMENT: F\nACTION: scroll down\nVALUE: None", ("F", None, "")),
        ("I would click option G.", (None, None, "")),
        ("ELEMENT: V\nACTION: TYPE\nVALUE: 3.5", ("V", "TYPE", "3.5")),
        ("ELEMENT: V\nACTION: TYPE\nVALUE: St. Louis, MO.", ("V", "TYPE", "St. Louis, MO")),
        ("", (None, None, "")),
    ],
)
def test_parser_tolerates_what_models_write(reply, expected):
    answer = parse_answer(reply)
    assert (answer.element, answer.action, answer.value) == expected


@pytest.mark.parametrize(
    ("index", "label"),
    [(0, "A"), (1, "B"), (25, "Z"), (26, "AA"), (27, "AB"), (51, "AZ"), (52, "BA"), (701, "ZZ"),
     (702, "AAA")],
)  # fmt: skip
def test_choice_labels_run_like_spreadsheet_columns(index, label):
    assert choice_label(index) == label
    assert label_index(label) == index


@given(st.integers(min_value=0, max_value=20_000))
def test_label_index_inverts_choice_label(index):
    assert label_index(choice_label(index)) == index


@pytest.mark.parametrize("text", ["", "a", "A1", "none", "É"])
def test_label_index_refuses_non_labels(text):
    assert label_index(text) is None


def test_prompts_have_two_turns_and_end_with_none_of_the_others():
    choices = [f"<a bnid={i}/>" for i in range(27)]
    prompts = step_prompts("Buy milk", ["[link] Dairy -> CLICK"], "<html/>", choices)
    assert [m["role"] for m in prompts.turn_one] == ["system", "user"]
    assert [m["role"] for m in prompts.turn_two] == ["user"]
    user = prompts.turn_one[1]["content"]
    assert "Buy milk" in user and "[link] Dairy -> CLICK" in user and "<html/>" in user
    grounding = prompts.turn_two[0]["content"]
    assert "A. <a bnid=0/>" in grounding and "AA. <a bnid=26/>" in grounding
    assert f"AB. {NONE_OF_THE_OTHERS}" in grounding
    assert "pick AB" in grounding
    for field in ("ELEMENT:", "ACTION:", "VALUE:"):
        assert field in grounding


def test_prompts_say_none_when_nothing_was_done_yet():
    prompts = step_prompts("Buy milk", [], "<html/>", [])
    assert "Actions taken so far:\nNone" in prompts.turn_one[1]["content"]
    assert f"A. {NONE_OF_THE_OTHERS}" in prompts.turn_two[0]["content"]
