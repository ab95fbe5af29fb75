"""Benchmark metrics on hand-computed cases, and the leaderboard built from them."""

from __future__ import annotations

import pytest

from bigaction_assets.benchmark.leaderboard import leaderboard_rows, markdown_table
from bigaction_assets.benchmark.metrics import (
    Scored,
    aggregate,
    operation_f1,
    operation_string,
    operation_token_f1,
    score_step,
)


@pytest.mark.parametrize(
    ("predicted", "true", "expected"),
    [
        ("CLICK", "CLICK", 1.0),
        ("", "", 1.0),  # both empty
        ("CLICK", "", 0.0),  # one empty
        ("", "TYPE New York", 0.0),
        ("TYPE New York", "TYPE New York", 1.0),
        ("TYPE new york", "TYPE New York", 1 / 3),  # case matters: only TYPE is shared
        ("TYPE a b", "TYPE a", 0.8),  # precision 2/3, recall 1
        ("SELECT 2", "CLICK", 0.0),
        ("TYPE a a a", "TYPE a", 1.0),  # sets, not bags
    ],
)
def test_operation_f1_as_mind2web_defines_it(predicted, true, expected):
    assert operation_f1(predicted, true) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("predicted", "true", "expected"),
    [
        ("TYPE new york", "TYPE New York", 1.0),  # lower-cased first
        ("", "", 1.0),
        ("CLICK", "", 0.0),
        ("SELECT 2", "CLICK", 0.0),
    ],
)
def test_operation_token_f1_on_lowercased_cl100k_tokens(predicted, true, expected):
    assert operation_token_f1(predicted, true) == pytest.approx(expected)


def test_operation_token_f1_counts_shared_tokens():
    # "type" and " new" are shared, " york" vs " jersey" is not: cl100k_base gives 3 tokens each
    assert operation_token_f1("TYPE New York", "TYPE New Jersey") == pytest.approx(2 / 3)


def test_operation_string_drops_empty_parts():
    assert operation_string("CLICK", "") == "CLICK"
    assert operation_string("TYPE", " New York ") == "TYPE New York"
    assert operation_string(None, None) == ""


def test_step_success_needs_the_element_and_an_exact_operation():
    right = score_step("8635", ["8635", "8640"], "TYPE", "New York", "TYPE", "New York")
    assert right.element_correct and right.op_f1 == 1.0 and right.step_success
    other_target = score_step("8640", ["8635", "8640"], "CLICK", "", "CLICK", "")
    assert other_target.step_success  # any of several targets counts
    wrong_value = score_step("8635", ["8635"], "TYPE", "New", "TYPE", "New York")
    assert wrong_value.element_correct and not wrong_value.step_success
    assert wrong_value.op_f1 == pytest.approx(0.8)
    none_chosen = score_step(None, ["8635"], "CLICK", "", "CLICK", "")
    assert not none_chosen.element_correct and none_chosen.op_f1 == 1.0


def _scored(task: str, success: bool, element: bool = True, f1: float = 1.0) -> Scored:
    return Scored(task, element, f1, f1, success)


def test_micro_macro_and_task_success_with_one_failed_step():
    steps = [
        _scored("a", True),
        _scored("a", False, element=False, f1=0.5),  # task a fails on its second step
        _scored("b", True),
    ]
    result = aggregate(steps)
    assert result["steps"] == 3 and result["tasks"] == 2
    assert result["step_success_micro"] == pytest.approx(2 / 3)
    assert result["step_success_macro"] == pytest.approx((0.5 + 1.0) / 2)
    assert result["element_accuracy_micro"] == pytest.approx(2 / 3)
    assert result["op_f1_micro"] == pytest.approx(2.5 / 3)
    assert result["op_f1_macro"] == pytest.approx((0.75 + 1.0) / 2)
    assert result["task_success"] == pytest.approx(0.5)


def test_aggregate_of_nothing_is_zero():
    assert aggregate([])["step_success_micro"] == 0.0


def _result(
    model, task, step, status, split="test_task", success=None, element=None, f1=None,
    mode="text",
):  # fmt: skip
    return {
        "model": model, "mode": mode, "task_id": task, "step": step, "split": split,
        "status": status,
        "element_correct": element, "op_f1": f1, "op_token_f1": f1, "step_success": success,
    }  # fmt: skip


def test_leaderboard_leaves_invalid_steps_out_and_counts_them():
    results = [
        _result("m", "t1", 0, "answered", success=True, element=True, f1=1.0),
        _result("m", "t1", 1, "invalid_step"),
        _result("m", "t2", 0, "missing", success=False, element=False, f1=0.0),
        _result("m", "t3", 0, "answered", split="train", success=True, element=True, f1=1.0),
    ]
    rows = {(r["model"], r["split"]): r for r in leaderboard_rows(results)}
    test = rows[("m", "test_task")]
    assert test["steps"] == 2 and test["invalid_steps"] == 1 and test["missing"] == 1
    assert test["step_success_micro"] == pytest.approx(0.5)
    assert test["task_success"] == pytest.approx(0.5)  # t1 succeeds on its only valid step
    overall = rows[("m", "all")]
    assert overall["steps"] == 3 and overall["tasks"] == 3
    assert overall["step_success_micro"] == pytest.approx(2 / 3)
    assert list(rows) == [("m", "test_task"), ("m", "train"), ("m", "all")]
    table = markdown_table(list(rows.values()))
    assert table.splitlines()[0].startswith("| model | mode | split |")
    assert table.splitlines()[2].startswith("| m | text | test_task | 2 | 2 | 1 | 0.500")


def test_the_leaderboard_ranks_each_mode_apart():
    """One model seen with screenshots and without: two rows per split, each named by mode."""
    results = [
        _result("m", "t1", 0, "answered", success=True, element=True, f1=1.0, mode="text"),
        _result("m", "t1", 0, "invalid_step", mode="screenshot"),
        _result("m", "t2", 0, "answered", success=False, element=False, f1=0.0, mode="text"),
        _result("m", "t2", 0, "answered", success=True, element=True, f1=1.0, mode="screenshot"),
    ]
    rows = {(r["mode"], r["split"]): r for r in leaderboard_rows(results)}
    assert set(rows) == {(m, s) for m in ("screenshot", "text") for s in ("test_task", "all")}
    shots, text = rows[("screenshot", "all")], rows[("text", "all")]
    assert (shots["steps"], shots["invalid_steps"], shots["step_success_micro"]) == (1, 1, 1.0)
    assert (text["steps"], text["invalid_steps"], text["step_success_micro"]) == (2, 0, 0.5)
