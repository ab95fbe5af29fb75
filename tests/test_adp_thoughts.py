"""ADP's thought cache: thoughts its generator paid for become the recorded thoughts of the
actions they are keyed to, the rest is counted or rejected, and export gives back the records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import run_ingest, write_standardized

from bigaction_assets import adp_export
from bigaction_assets.sources.adp import ADAPTER
from bigaction_assets.sources.adp_thoughts import ADP_GENERATED
from bigaction_assets.unread import unread_files

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "adp_thoughts"
CACHE = "swe-gym.generated_thoughts.json"


def land(tmp_path: Path, trajectories: Any, cache: Any, name: str = "runs") -> Path:
    folder = tmp_path / "landing" / "adp"
    folder.mkdir(parents=True)
    (folder / f"{name}.json").write_bytes(orjson.dumps(trajectories))
    if cache is not None:
        text = cache if isinstance(cache, bytes) else orjson.dumps(cache)
        (folder / f"{name}.generated_thoughts.json").write_bytes(text)
    return folder


def ingest(folder: Path, name: str = "runs"):
    files = ADAPTER.dataset_files(folder)[name]
    return run_ingest(ADAPTER, name, files, folder.parent)


def tallies(ingested) -> dict[str, int]:
    return {row["name"]: row["count"] for row in ingested.rows("tallies")}


@pytest.fixture
def swe_gym(tmp_path: Path) -> Path:
    folder = tmp_path / "landing" / "adp"
    folder.mkdir(parents=True)
    for path in FIXTURE.glob("swe-gym*.json"):
        shutil.copy(path, folder / path.name)
    return folder


def test_cached_thoughts_become_recorded_thoughts_of_their_actions(swe_gym, tmp_path):
    assert [p.name for p in ADAPTER.dataset_files(swe_gym)["swe-gym"]] == [CACHE, "swe-gym.json"]
    ingested = ingest(swe_gym, "swe-gym")
    assert ingested.rows("rejects") == []
    cache = json.loads((FIXTURE / CACHE).read_text())
    trajectories = {t["id"]: t for t in json.loads((FIXTURE / "swe-gym.json").read_text())}
    by_position = {(e["episode_id"].split("/", 1)[1], e["idx"]): e for e in ingested.rows("events")}
    keyed = {(tid, int(k)): v for tid, entries in cache.items() for k, v in entries.items()}
    present = {key: thought for key, thought in keyed.items() if key[0] in trajectories}
    for key, thought in present.items():
        event = by_position[key]
        assert event["description"] == thought and event["thought_source"] == ADP_GENERATED
    recorded = [e for key, e in by_position.items() if key not in present and e["description"]]
    assert recorded and {e["thought_source"] for e in recorded} == {"recorded"}
    assert tallies(ingested) == {
        "adp_thoughts_used": len(present),  # 13
        "adp_thoughts_for_absent_trajectories": len(keyed) - len(present),  # 3
    }
    # a cached thought is ours to train on, not part of the record: export gives it back as is
    partition = "adp.swe-gym"
    write_standardized(tmp_path / "lake", partition, ingested.tables)
    exported = list(adp_export.iter_trajectories(tmp_path / "lake", partition))
    assert exported == list(trajectories.values())


def action(description: Any = None, **item: Any) -> dict[str, Any]:
    return {
        "class_": "api_action",
        "function": "click",
        "kwargs": {},
        "description": description,
        **item,
    }


TRAJECTORY = {
    "id": "t1",
    "content": [
        {"class_": "text_observation", "content": "Fix it", "source": "user"},  # 0
        action(),  # 1: no thought
        {"class_": "text_observation", "content": "ok", "source": "environment"},  # 2
        action("I already know why."),  # 3: a recorded thought
        action(""),  # 4: an empty one
        {"class_": "code_action", "language": "bash", "content": "ls"},  # 5: no description key
    ],
}


def test_mismatches_are_rejected_or_counted_never_dropped(tmp_path):
    cache = {
        "t1": {
            "1": "I click to open it.",
            "2": "Thought for an observation.",  # keyed to no action
            "3": "A second opinion.",  # the record's own thought stays
            "4": "   ",  # ADP's generator failed here: nothing to use
            "5": "I list the files.",
            "9": "Past the end.",  # keyed to no action
            "x": "Not a position.",
        },
        "t2": ["not", "an", "object"],
        "gone": {"1": "Of a trajectory this dataset does not hold."},
    }
    cache["t1"]["6"] = 7  # not a string
    ingested = ingest(land(tmp_path, [TRAJECTORY], cache))
    rejects = {
        (r["reason"], orjson.loads(r["raw_text"]).popitem()[0]) for r in ingested.rows("rejects")
    }
    assert rejects == {
        ("thought_keyed_to_no_action", "t1"),
        ("invalid_value", "t1"),
        ("wrong_type", "t1"),
        ("wrong_type", "t2"),
    }
    reasons = sorted(r["reason"] for r in ingested.rows("rejects"))
    assert reasons.count("thought_keyed_to_no_action") == 2  # positions 2 and 9
    assert all(r["file"] == "adp/runs.generated_thoughts.json" for r in ingested.rows("rejects"))
    events = {e["idx"]: e for e in ingested.rows("events")}
    assert (events[1]["description"], events[1]["thought_source"]) == (
        "I click to open it.",
        ADP_GENERATED,
    )
    assert (events[3]["description"], events[3]["thought_source"]) == (
        "I already know why.",
        "recorded",
    )
    assert (events[4]["description"], events[4]["thought_source"]) == ("", None)
    assert (events[5]["description"], events[5]["thought_source"]) == (
        "I list the files.",
        ADP_GENERATED,
    )
    assert tallies(ingested) == {
        "adp_thoughts_used": 2,
        "adp_thoughts_behind_recorded": 1,
        "adp_thoughts_empty": 1,
        "adp_thoughts_for_absent_trajectories": 1,
    }
    assert len(ingested.rows("episodes")) == 1


@pytest.mark.parametrize(
    ("cache", "reason"),
    [(b'{"t1": {"1": "unterminated', "malformed_json"), (b'["t1"]', "wrong_type")],
)
def test_an_unreadable_cache_is_one_reject_and_the_trajectories_still_load(tmp_path, cache, reason):
    ingested = ingest(land(tmp_path, [TRAJECTORY], cache))
    assert [r["reason"] for r in ingested.rows("rejects")] == [reason]
    assert len(ingested.rows("episodes")) == 1 and ingested.rows("tallies") == []
    assert all(e["thought_source"] != ADP_GENERATED for e in ingested.rows("events"))


def test_landing_layout_of_a_cache(tmp_path):
    folder = tmp_path / "adp"
    (folder / "sharded").mkdir(parents=True)
    (folder / "sharded" / "part-1.jsonl").write_text(json.dumps(TRAJECTORY) + "\n")
    (folder / "sharded.generated_thoughts.json").write_text("{}")
    (folder / "single.jsonl").write_text(json.dumps(TRAJECTORY) + "\n")
    found = ADAPTER.dataset_files(folder)
    assert {name: [p.name for p in files] for name, files in found.items()} == {
        "sharded": ["sharded.generated_thoughts.json", "part-1.jsonl"],
        "single": ["single.jsonl"],
    }
    # a cache beside no dataset, or among a dataset's shards, is read by nothing: the datasets
    # go on as before, and the unread table names both files with the layout to use
    (folder / "orphan.generated_thoughts.json").write_text("{}")
    (folder / "sharded" / "generated_thoughts.json").write_text("{}")
    again = ADAPTER.dataset_files(folder)
    assert {name: [p.name for p in files] for name, files in again.items()} == {
        "sharded": ["sharded.generated_thoughts.json", "part-1.jsonl"],
        "single": ["single.jsonl"],
    }
    unread = {f.path: f for f in unread_files(tmp_path, {"adp": ADAPTER})}
    assert set(unread) == {
        "adp/orphan.generated_thoughts.json",
        "adp/sharded/generated_thoughts.json",
    }
    assert all(f.reason == "not_in_a_dataset" for f in unread.values())
    assert all("<dataset>.generated_thoughts.json" in f.detail for f in unread.values())
