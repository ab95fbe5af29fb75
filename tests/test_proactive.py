"""ProactiveBench source and ProactiveAgent's rules: traces and reward rows to episodes, rejects
with reasons, categories, the test set (30/30/30/30 on the real reward data), Fleiss' kappa."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import orjson
import pytest
from conftest import SHARED_DATA, land_file, run_ingest

from bigaction_assets.reward.agreement import counts_by_item, fleiss_kappa
from bigaction_assets.reward.judgements import reward_episode_judgement
from bigaction_assets.reward.rules import Judgement, Observation, TurnLabel, judge_turn, verdict
from bigaction_assets.reward.split import held_out_ids
from bigaction_assets.sft.examples import (
    NOT_FOR_TRAINING,
    EpisodeSkipped,
    ExampleSettings,
    episode_examples,
)
from bigaction_assets.sources.proactive import ADAPTER

ROOT = Path(__file__).resolve().parents[1]
BUNDLED_REWARD = ROOT / "landing" / "proactive" / "reward_test.jsonl"
SHARED_REWARD = SHARED_DATA / "proactive" / "reward_data" / "test_data.jsonl"
OBS = [{"time": "1.0", "event": "The user opens a file."}]


def ingest(tmp_path: Path, name: str, data: bytes):
    landing = tmp_path / "landing"
    path = land_file(landing, "proactive", name, data)
    dataset = name.split("/")[0].rsplit(".", 1)[0]
    return run_ingest(ADAPTER, dataset, [path], landing)


def judgements_of(result) -> list[Judgement]:
    events: dict[str, list] = {}
    for event in result.rows("events"):
        events.setdefault(event["episode_id"], []).append(event)
    return [
        reward_episode_judgement(episode, events[episode["episode_id"]])
        for episode in result.rows("episodes")
    ]


def categories_and_test_set(path: Path, tmp_path: Path) -> tuple[Counter, Counter]:
    result = ingest(tmp_path, "reward_test.jsonl", path.read_bytes())
    assert result.rows("rejects") == []
    judged = judgements_of(result)
    chosen = held_out_ids(judged)
    return Counter(j.category for j in judged), Counter(
        j.category for j in judged if j.example_id in chosen
    )


def test_bundled_reward_data_comes_out_30_per_category(tmp_path) -> None:
    categories, test = categories_and_test_set(BUNDLED_REWARD, tmp_path)
    assert categories == {"MN": 30, "CR": 30, "CD": 30, "FA": 30}
    assert test == {"MN": 30, "CR": 30, "CD": 30, "FA": 30}


@pytest.mark.skipif(not SHARED_REWARD.exists(), reason=f"{SHARED_REWARD} is absent (../shared)")
def test_shared_reward_data_comes_out_30_per_category(tmp_path) -> None:
    categories, test = categories_and_test_set(SHARED_REWARD, tmp_path)
    assert categories == {"MN": 30, "CR": 30, "CD": 30, "FA": 30}
    assert test == {"MN": 30, "CR": 30, "CD": 30, "FA": 30}


def test_reward_rows_map_to_episodes_with_their_judgement(tmp_path) -> None:
    row = {"obs": OBS, "pred_task": "Explain the error", "valid": True, "help_needed": True,
           "annotation": [True, True, False], "category": "Correct-Detection (CD)"}  # fmt: skip
    result = ingest(tmp_path, "reward_test.jsonl", orjson.dumps(row) + b"\n")
    [episode] = result.rows("episodes")
    assert episode["episode_id"].startswith("proactive/reward-")
    assert episode["source_split"] == "test"
    events = result.rows("events")
    assert [e["kind"] for e in events] == ["text_observation", "api_action"]
    assert orjson.loads(events[1]["kwargs"]) == {"tasks": ["Explain the error"]}
    [judged] = judgements_of(result)
    assert (judged.category, judged.votes, judged.agreeing) == ("CD", (True, True, False), 2)
    assert judged.example_id == episode["episode_id"] + "#0"


@pytest.mark.parametrize(
    ("row", "reason", "detail"),
    [
        ({"obs": OBS, "pred_task": "t", "valid": True, "help_needed": False,
          "annotation": [False, False, True]}, "invalid_value", "say False"),
        ({"obs": OBS, "pred_task": None, "valid": True, "help_needed": True,
          "annotation": [False, False, False]}, "invalid_value", "opposite of help_needed"),
        ({"obs": OBS, "pred_task": "t", "valid": False, "help_needed": False,
          "annotation": [False, False, False], "category": "Correct-Detection (CD)"},
         "invalid_value", "False-Alarm (FA)"),
        ({"obs": OBS, "pred_task": "t", "valid": True, "help_needed": True,
          "annotation": [True]}, "invalid_value", "at least 2"),
        ({"obs": OBS, "pred_task": "t", "valid": "yes", "help_needed": True,
          "annotation": [True, True]}, "wrong_type", "row.valid"),
        ({"obs": [{"time": "1"}], "pred_task": None, "valid": True, "help_needed": False,
          "annotation": [True, True]}, "missing_field", "event"),
        ({"pred_task": None}, "missing_field", "`obs`"),
    ],
)  # fmt: skip
def test_reward_rows_that_break_the_rules_are_rejected(tmp_path, row, reason, detail) -> None:
    good = {"obs": OBS, "pred_task": None, "valid": True, "help_needed": False,
            "annotation": [True, True, False]}  # fmt: skip
    data = orjson.dumps(good) + b"\n" + orjson.dumps(row) + b"\n{broken\n"
    result = ingest(tmp_path, "reward_test.jsonl", data)
    assert len(result.rows("episodes")) == 1
    reasons = [(r["line"], r["reason"]) for r in result.rows("rejects")]
    assert reasons == [(2, reason), (3, "malformed_json")]
    assert detail in result.rows("rejects")[0]["detail"]


def test_a_trace_file_is_one_episode_of_observations_and_proposals(tmp_path) -> None:
    turns = [
        {"observation": {"time": "1", "event": "opens VS Code"},
         "agent_response": {"candidate_task": ["a", "b"]}, "task_status": True},
        {"observation": {"time": "2", "event": "types"}, "agent_response": {},
         "task_status": False},
        {"observation": {"time": "3", "event": "saves"},
         "agent_response": {"candidate_task": []}, "task_status": False},
    ]  # fmt: skip
    result = ingest(tmp_path, "traces/code_7.json", orjson.dumps(turns))
    [episode] = result.rows("episodes")
    assert (episode["episode_id"], episode["domain"]) == ("proactive/code_7", "coding")
    assert orjson.loads(episode["details"])["train_on"] is False
    events = result.rows("events")
    assert [(e["kind"], orjson.loads(e["extra"])["turn"]) for e in events] == [
        ("text_observation", 0), ("api_action", 0), ("text_observation", 2), ("api_action", 2),
    ]  # fmt: skip
    assert orjson.loads(events[3]["kwargs"]) == {"tasks": []}
    [reject] = result.rows("rejects")
    assert (reject["record_index"], reject["reason"]) == (1, "missing_field")


def test_sft_never_trains_on_proactive_episodes(tmp_path) -> None:
    files = ADAPTER.dataset_files(ROOT / "landing" / "proactive")["traces"][:1]
    result = run_ingest(ADAPTER, "traces", files, ROOT / "landing")
    [episode] = result.rows("episodes")
    with pytest.raises(EpisodeSkipped) as skipped:
        episode_examples(episode, result.rows("events"), {}, ExampleSettings())
    assert skipped.value.reason == NOT_FOR_TRAINING and "ProactiveBench" in skipped.value.detail


def test_the_bundled_traces_standardize_without_rejects(tmp_path) -> None:
    landing = ROOT / "landing"
    files = ADAPTER.dataset_files(landing / "proactive")["traces"]
    result = run_ingest(ADAPTER, "traces", files, landing)
    assert len(result.rows("episodes")) == 12 and result.rows("rejects") == []


# --- the rules on app labels ------------------------------------------------------------------


def label(*accepted: int, help_needed: bool | None = None) -> TurnLabel:
    return TurnLabel(frozenset(accepted), help_needed if not accepted else True)


@pytest.mark.parametrize(
    ("votes", "expected"),
    [((True, True, False), True), ((False, False, True), False), ((True, False), None),
     ((True, True, False, False), None), ((True, True, True, False), True)],
)  # fmt: skip
def test_a_verdict_needs_two_votes_one_way(votes, expected) -> None:
    assert verdict(votes) is expected


def test_a_turn_yields_its_null_task_and_decided_tasks() -> None:
    obs = [Observation("1", "reads an error")]
    # task 0 chosen by all -> help needed; task 1 rejected by 2; task 2 split 1-1-? -> 2 reject
    labels = [label(0, 2), label(0), label(0, 1)]
    judged, undecided = judge_turn("proactive/x#1", "proactive/x", obs, ["fix", "b", "c"], labels)
    assert undecided == 0
    by_id = {j.example_id: (j.category, j.votes) for j in judged}
    assert by_id == {
        "proactive/x#1.none": ("MN", (False, False, False)),
        "proactive/x#1.task0": ("CD", (True, True, True)),
        "proactive/x#1.task1": ("FA", (False, False, True)),
        "proactive/x#1.task2": ("FA", (True, False, False)),
    }


def test_no_task_chosen_by_all_means_no_help_needed() -> None:
    labels = [label(1), label(help_needed=False), label(help_needed=False)]
    judged, _ = judge_turn("p/x#3", "p/x", [], ["a", "b"], labels)
    null = judged[0]
    assert (null.category, null.valid, null.votes) == ("CR", True, (False, True, True))


def test_a_turn_without_candidates_uses_the_help_votes() -> None:
    needed, _ = judge_turn("p/x#5", "p/x", [], [], [label(help_needed=True)] * 3)
    not_all, _ = judge_turn("p/x#5", "p/x", [], [], [label(help_needed=True)] * 2 + [label()])
    assert [j.category for j in needed] == ["MN"] and [j.category for j in not_all] == ["CR"]
    assert judge_turn("p/x#5", "p/x", [], ["a"], [label(0)]) == ([], 0)  # one annotator


def test_a_two_two_split_leaves_a_task_undecided() -> None:
    judged, undecided = judge_turn(
        "p/x#1", "p/x", [], ["a"], [label(0), label(0), label(), label()]
    )
    assert undecided == 1 and [j.example_id for j in judged] == ["p/x#1.none"]


def make(example_id: str, task: str | None, valid: bool, votes: tuple[bool, ...]) -> Judgement:
    return Judgement(example_id, "e", (), task, valid, False, votes, "app")


def test_the_test_set_takes_unanimous_items_first_and_is_stable() -> None:
    unanimous = [make(f"u{i}", "t", True, (True,) * 3) for i in range(5)]
    two = [make(f"m{i}", "t", True, (True, True, False)) for i in range(5)]
    one = [make("x", "t", True, (True, False, False))]
    chosen = held_out_ids(two + one + unanimous, per_category=7)
    assert {f"u{i}" for i in range(5)} <= chosen and len(chosen) == 7 and "x" not in chosen
    assert held_out_ids(list(reversed(two + one + unanimous)), per_category=7) == chosen
    assert held_out_ids(two + unanimous, per_category=7, seed=1) != chosen  # the seed matters


# --- Fleiss' kappa ------------------------------------------------------------------------------

# Wikipedia's worked example ("Fleiss' kappa"): 10 subjects, 14 raters, 5 categories.
WIKIPEDIA = [
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
]  # fmt: skip


def test_fleiss_kappa_on_the_wikipedia_example() -> None:
    assert fleiss_kappa(WIKIPEDIA) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_kappa_edges() -> None:
    assert fleiss_kappa([[3, 0], [0, 3]]) == pytest.approx(1.0)
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # one category only: chance is 1
    assert fleiss_kappa([[1, 0]]) is None  # nobody to agree with
    ratings = [("a", "x"), ("a", "x"), ("b", "y"), ("b", "x")]
    assert counts_by_item(ratings, ["x", "y"]) == [[2, 0], [1, 1]]
    with pytest.raises(ValueError, match="category"):
        counts_by_item([("a", "z")], ["x", "y"])
