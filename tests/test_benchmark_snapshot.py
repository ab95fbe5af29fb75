"""Benchmark snapshot rows from standardized data: sampling, validity, prompts, the real step."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from bigaction_assets.benchmark.prompts import choice_label
from bigaction_assets.benchmark.sampling import sample_choices
from bigaction_assets.benchmark.snapshot import SnapshotSettings, episode_rows
from bigaction_assets.schemas import frame
from bigaction_assets.schemas.benchmark import BenchmarkSnapshotSchema
from bigaction_assets.sources.mind2web import ADAPTER as MIND2WEB
from tests.conftest import BUNDLED_LANDING, FIXTURES, land_file, run_ingest

TRAIN_DEMO = BUNDLED_LANDING / "mind2web" / "train_demo.json"
DEMO_SHOTS = BUNDLED_LANDING / "mind2web" / "train_demo.images"
SEEACT_STEP = FIXTURES / "mind2web" / "seeact_step.jsonl"


def snapshot(
    tmp_path: Path, name: str, data: bytes, settings=None, shots: Path | None = DEMO_SHOTS
) -> list[dict[str, Any]]:
    """Land one Mind2Web file (with the demo's screenshots beside it, named by action, unless
    `shots` is None), standardize it, and build its snapshot rows in pure code."""
    landing = tmp_path / "landing"
    path = land_file(landing, "mind2web", name, data)
    dataset = name.rsplit(".", 1)[0]
    if shots is not None:
        shutil.copytree(shots, landing / "mind2web" / f"{dataset}.images")
    ingested = run_ingest(MIND2WEB, dataset, [path], landing)
    events: dict[str, list[dict[str, Any]]] = {}
    for event in ingested.rows("events"):
        events.setdefault(event["episode_id"], []).append(event)
    candidates: dict[str, list[dict[str, Any]]] = {}
    for candidate in ingested.rows("web_candidates"):
        candidates.setdefault(candidate["episode_id"], []).append(candidate)
    pages = {
        p["html_sha"]: (p["raw_html"], p["cleaned_html"]) for p in ingested.rows("dom_snapshots")
    }
    rows = []
    for episode in ingested.rows("episodes"):
        rows += episode_rows(
            episode, events[episode["episode_id"]], candidates.get(episode["episode_id"], []),
            pages, settings or SnapshotSettings(),
        )  # fmt: skip
    frame(BenchmarkSnapshotSchema, rows)  # every row meets the contract
    return rows


def test_sampling_is_a_pure_function_of_seed_task_step_and_elements():
    negatives = [str(n) for n in range(100, 160)]
    first = sample_choices("7", negatives, 20, 42, "task", 3)
    assert len(first) == 21 and "7" in first
    assert sample_choices("7", list(reversed(negatives)), 20, 42, "task", 3) == first
    assert sample_choices("7", negatives, 20, 43, "task", 3) != first
    assert sample_choices("7", negatives, 20, 42, "task", 4) != first
    assert set(sample_choices("7", negatives[:5], 20, 42, "task", 3)) == {"7", *negatives[:5]}
    assert len(sample_choices(None, negatives[:3], 20, 42, "task", 3)) == 3
    assert sample_choices("7", ["7", "7"], 20, 42, "task", 3) == ["7"]


def test_adding_a_task_leaves_every_other_step_byte_identical(tmp_path):
    tasks = json.loads(TRAIN_DEMO.read_bytes())
    before = snapshot(tmp_path / "a", "train_one.json", orjson.dumps(tasks[:3]))
    extra = copy.deepcopy(tasks[1])
    extra["annotation_id"] = "00000000-new-task"
    grown = [tasks[3], *tasks[:2], extra, tasks[2]]  # new tasks, and a new order too
    after = snapshot(tmp_path / "b", "train_one.json", orjson.dumps(grown))
    key = lambda row: (row["task_id"], row["step"])  # noqa: E731
    after_by_step = {key(row): row for row in after}
    assert len(after) == len(before) + 6  # 3 + 3 new steps
    for row in before:
        assert orjson.dumps(after_by_step[key(row)]) == orjson.dumps(row)


def test_bundled_mind2web_snapshot(tmp_path):
    rows = snapshot(tmp_path, "train_demo.json", TRAIN_DEMO.read_bytes())
    assert len(rows) == 14 and all(row["is_valid"] for row in rows)
    for row in rows:
        shot = (DEMO_SHOTS / f"{row['action_uid']}.webp").read_bytes()
        assert row["image_sha"] == hashlib.sha256(shot).hexdigest()  # the page it was taken on
        answer = row["candidate_ids"][
            [choice_label(i) for i in range(99)].index(row["answer_label"])
        ]
        assert answer in row["target_ids"]
        assert row["none_label"] == choice_label(len(row["candidates"]))
        assert row["split"] == "train" and row["k"] == 20 and row["seed"] == 42
        assert len(row["previous_actions"]) == row["step"]
        turns = json.loads(row["prompt_0"]) + json.loads(row["prompt_1"])
        assert [t["role"] for t in turns] == ["system", "user", "user"]
        assert row["cleaned_html"] in turns[1]["content"]
        for choice in row["candidates"]:
            assert choice in turns[2]["content"]
    # the step whose target Mind2Web marks only in the raw HTML (no positive candidate)
    united = [r for r in rows if r["task_id"].startswith("5a4fcfe3")]
    assert united[1]["target_ids"] and united[1]["is_valid"]


def test_k_and_pruning_are_run_config(tmp_path):
    small = snapshot(
        tmp_path / "a", "train_demo.json", TRAIN_DEMO.read_bytes(), SnapshotSettings(k=3)
    )
    assert all(len(row["candidates"]) == 4 for row in small)
    whole = snapshot(
        tmp_path / "b",
        "train_demo.json",
        TRAIN_DEMO.read_bytes(),
        SnapshotSettings(prune_html=False),
    )
    assert all(
        len(w["cleaned_html"]) >= len(s["cleaned_html"]) for w, s in zip(whole, small, strict=True)
    )


def test_a_target_missing_from_the_page_makes_the_step_invalid(tmp_path):
    tasks = json.loads(TRAIN_DEMO.read_bytes())[:1]
    action = tasks[0]["actions"][0]
    target = action["pos_candidates"][0]["backend_node_id"]
    action["raw_html"] = action["raw_html"].replace(
        f'backend_node_id="{target}"', 'backend_node_id="x"'
    )
    rows = snapshot(tmp_path, "train_gone.json", orjson.dumps(tasks))
    assert not rows[0]["is_valid"] and rows[0]["invalid_reason"] == "target_not_in_page"
    assert rows[0]["answer_label"] is None and rows[0]["target_ids"] == []
    assert rows[0]["candidates"], "an invalid step still shows its negatives"
    assert all(row["is_valid"] for row in rows[1:])


def test_the_real_seeact_step(tmp_path):
    rows = snapshot(tmp_path, "test_task_seeact.jsonl", SEEACT_STEP.read_bytes())
    assert len(rows) == 1
    row = rows[0]
    # SeeAct's rows carry no screenshot: posed in full, but valid in the text-only mode only
    assert not row["is_valid"] and row["invalid_reason"] == "no_screenshot"
    assert row["text_only_valid"] and row["image_sha"] is None
    assert row["split"] == "test_task" and row["step"] == 2
    assert row["task_id"] == "725d96cd-9283-4ec7-b902-d003503f2d6b"
    assert row["target_ids"] == ["8635"] and len(row["candidates"]) == 21
    assert row["previous_actions"] == [
        "[textbox]  Search on Thumbtack -> TYPE: wedding photographer",
        "[textbox]  Zip code -> TYPE: 10203",
    ]
    assert row["raw_html"] is None  # SeeAct's rows carry only the cleaned page
    position = row["candidate_ids"].index("8635")
    assert row["answer_label"] == choice_label(position)
    assert row["candidates"][position].startswith("<button bnid=8635")
    assert (row["target_op"], row["target_op_value"]) == ("CLICK", "")
    again = snapshot(tmp_path / "again", "test_task_seeact.jsonl", SEEACT_STEP.read_bytes())
    assert orjson.dumps(again) == orjson.dumps(rows)


@pytest.mark.skipif(
    not (Path(__file__).resolve().parents[2] / "shared" / "data" / "mind2web").is_dir(),
    reason="../shared/data is absent: the copy in tests/fixtures covers the same step",
)
def test_the_fixture_is_the_shared_sample():
    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "mind2web"
    assert (shared / "seeact_step.jsonl").read_bytes() == SEEACT_STEP.read_bytes()


def test_a_step_without_its_screenshot_is_invalid_with_its_reason(tmp_path):
    """As MM-Mind2Web~: no screenshot, no valid multimodal step; the text-only mode keeps it."""
    shots = tmp_path / "shots"
    shutil.copytree(DEMO_SHOTS, shots)
    tasks = json.loads(TRAIN_DEMO.read_bytes())
    lost = tasks[0]["actions"][1]["action_uid"]
    (shots / f"{lost}.webp").unlink()
    rows = snapshot(tmp_path / "lake", "train_demo.json", TRAIN_DEMO.read_bytes(), shots=shots)
    [blind] = [row for row in rows if row["action_uid"] == lost]
    assert blind["image_sha"] is None
    assert not blind["is_valid"] and blind["invalid_reason"] == "no_screenshot"
    assert blind["text_only_valid"] and blind["answer_label"] is not None  # posed in full
    others = [row for row in rows if row["action_uid"] != lost]
    assert others and all(row["is_valid"] and row["image_sha"] for row in others)
    # a step that lacks its page is invalid for that first, screenshot or not
    for row in snapshot(tmp_path / "bare", "train_bare.json", orjson.dumps(tasks), shots=None):
        assert row["invalid_reason"] == "no_screenshot" and row["text_only_valid"]
