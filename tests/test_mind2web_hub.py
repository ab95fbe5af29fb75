"""Mind2Web step rows as the Hub publishes them: BigAction's mind2web_clean and OSU's
Multimodal-Mind2Web, as Parquet shards built here from their published column lists."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bigaction_assets import ingest
from bigaction_assets.sources.mind2web import ADAPTER
from tests.conftest import run_ingest
from tests.images import png

# mind2web_clean's features, in the card's order: every one a string but pandas' index
CLEAN_COLUMNS = (
    "Unnamed: 0", "split", "annotation_uid", "query", "html", "nodes_html", "action_uid",
    "operation", "selenium_ground_truth", "cur_actions_desc", "cur_actions_reprs",
    "pos_candidates", "prev_actions_desc", "prev_actions_reprs",
)  # fmt: skip
MULTIMODAL_COLUMNS = (
    "action_uid", "raw_html", "cleaned_html", "operation", "pos_candidates", "neg_candidates",
    "website", "domain", "subdomain", "annotation_id", "confirmed_task", "screenshot",
    "action_reprs", "target_action_index", "target_action_reprs",
)  # fmt: skip
PAGE = (
    '<html backend_node_id="1"><body backend_node_id="2">'
    '<a backend_node_id="10" href="/flights">Flights</a>'
    '<input backend_node_id="11" name="from" data_pw_testid_buckeye="s1">'
    '<button backend_node_id="12">Search</button></body></html>'
)
TYPE_PARIS = {"original_op": "TYPE", "value": "Paris", "op": "TYPE"}
TYPED_REPR = "[textbox]  From -> TYPE: Paris"
PNG = png(seed=3)


def candidate(node: str, box: str = "10,20,30,40") -> dict[str, Any]:
    attributes = {"backend_node_id": node, "bounding_box_rect": box}
    return {"tag": "a", "backend_node_id": node, "attributes": orjson.dumps(attributes).decode()}


def clean_row(index: int, task: str, uid: str, step: int, **changes: Any) -> dict[str, Any]:
    """A mind2web_clean row; structures as pandas writes them: Python literals."""
    reprs = ["[link]  Flights -> CLICK", "[textbox]  From -> TYPE: Paris"][:step]
    row = {
        "Unnamed: 0": index, "split": "test_website", "annotation_uid": task,
        "query": f"Book a flight ({task})", "html": PAGE, "nodes_html": "<a>Flights</a>",
        "action_uid": uid, "operation": str(TYPE_PARIS),
        "selenium_ground_truth": 'driver.find_element(By.NAME, "from").send_keys("Paris")',
        "cur_actions_desc": "Type the departure city", "cur_actions_reprs": TYPED_REPR,
        "pos_candidates": str([candidate("11")]), "prev_actions_desc": "",
        "prev_actions_reprs": str(reprs),
    }  # fmt: skip
    return {**row, **changes}


def shard(folder: Path, name: str, columns: tuple[str, ...], rows: list[dict], types=None) -> Path:
    types = types or {}
    table = pa.table(
        {c: pa.array([r[c] for r in rows], type=types.get(c, pa.string())) for c in columns}
    )
    path = folder / "data" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def clean_dataset(tmp_path: Path, rows: list[dict], name="test-00000-of-00001.parquet"):
    landing = tmp_path / "landing"
    types = {"Unnamed: 0": pa.int64()}
    shard(landing / "mind2web" / "mind2web_clean", name, CLEAN_COLUMNS, rows, types)
    shard_of = f"mind2web_clean~data~{name.removesuffix('.parquet')}"  # the folder's one shard
    files = ingest.dataset_files(landing, ADAPTER, shard_of)
    return run_ingest(ADAPTER, shard_of, files, landing)


def actions(result, episode_id: str) -> list[dict]:
    return [e for e in result.rows("events") if e["episode_id"] == episode_id and e["function"]]


def test_mind2web_clean_rows_group_into_episodes_by_task(tmp_path):
    rows = [
        clean_row(0, "task-a", "a1", 1),
        clean_row(
            1, "task-a", "a0", 0, operation="{'original_op': 'CLICK', 'value': '', 'op': 'CLICK'}",
            pos_candidates=str([candidate("10")]), cur_actions_reprs="['[link]  Flights -> CLICK']",
        ),
        clean_row(2, "task-b", "b0", 0),
    ]  # fmt: skip
    result = clean_dataset(tmp_path, rows)

    assert result.rows("rejects") == []
    assert [r["record_id"] for r in result.raw] == ["a1", "a0", "b0"]
    episodes = {e["source_id"]: e for e in result.rows("episodes")}
    assert set(episodes) == {"task-a", "task-b"}
    assert episodes["task-a"]["task"] == "Book a flight (task-a)"
    assert {e["source_split"] for e in episodes.values()} == {"test_website"}, "the split column"
    click, typed = actions(result, "mind2web/task-a")  # in step order, not row order
    assert (click["function"], orjson.loads(click["kwargs"])) == ("click", {"bid": "10"})
    assert orjson.loads(click["extra"])["action_repr"] == "[link]  Flights -> CLICK"
    extra = orjson.loads(typed["extra"])
    assert orjson.loads(typed["kwargs"]) == {"bid": "11", "text": "Paris"}
    assert (extra["step"], extra["op"], extra["action_uid"]) == (1, "TYPE", "a1")
    assert extra["selenium_ground_truth"].endswith('send_keys("Paris")')
    assert extra["cur_actions_desc"] == "Type the departure city"
    assert "prev_actions_desc" not in extra, "empty texts are not kept"
    assert typed["bbox"] == [10.0, 20.0, 30.0, 40.0]
    assert not [c for c in result.rows("web_candidates") if not c["positive"]]


def test_json_text_structures_read_too_and_an_empty_split_falls_back_to_the_shard(tmp_path):
    row = clean_row(
        0, "task-j", "j0", 0, split="",
        operation='{"op": "CLICK", "original_op": "CLICK", "value": ""}',
        pos_candidates=orjson.dumps([candidate("12")]).decode(), prev_actions_reprs="",
    )  # fmt: skip
    result = clean_dataset(tmp_path, [row], name="validation-00000-of-00001.parquet")
    [episode] = result.rows("episodes")
    assert episode["source_split"] == "validation"
    [action] = actions(result, "mind2web/task-j")
    assert orjson.loads(action["kwargs"]) == {"bid": "12"}


@pytest.mark.parametrize(
    ("changes", "reason", "detail"),
    [
        ({"operation": "CLICK the button"}, "invalid_value", "neither JSON nor a Python literal"),
        ({"operation": "{'value': 'x'}"}, "missing_field", "has no `op`"),
        ({"pos_candidates": "{'tag': 'a'}"}, "wrong_type", "not a list"),
        ({"prev_actions_reprs": "3"}, "wrong_type", "prev_actions_reprs is int"),
        ({"query": None}, "wrong_type", "row.query"),
        ({"pos_candidates": "[{'tag': 'a'}]"}, "missing_field", "backend_node_id"),
    ],
    ids=["op-text", "op-no-op", "candidates-dict", "previous-number", "no-query", "no-node-id"],
)
def test_a_malformed_row_rejects_its_whole_task_with_why(tmp_path, changes, reason, detail):
    rows = [clean_row(0, "task-a", "a0", 0), clean_row(1, "task-a", "a1", 1, **changes),
            clean_row(2, "task-b", "b0", 0)]  # fmt: skip
    result = clean_dataset(tmp_path, rows)
    assert [e["source_id"] for e in result.rows("episodes")] == ["task-b"]
    rejects = result.rows("rejects")
    assert [r["record_index"] for r in rejects] == [0, 1]
    assert {r["reason"] for r in rejects} == {reason}
    assert all(detail in r["detail"] for r in rejects)


def test_rows_that_come_back_to_an_ended_task_are_rejected(tmp_path):
    rows = [clean_row(0, "task-a", "a0", 0), clean_row(1, "task-b", "b0", 0),
            clean_row(2, "task-a", "a1", 1)]  # fmt: skip
    result = clean_dataset(tmp_path, rows)
    assert sorted(e["source_id"] for e in result.rows("episodes")) == ["task-a", "task-b"]
    [reject] = result.rows("rejects")
    assert (reject["reason"], reject["record_index"]) == ("non_contiguous_steps", 2)


def test_rows_of_one_task_that_disagree_on_the_split_are_rejected(tmp_path):
    rows = [clean_row(0, "task-a", "a0", 0), clean_row(1, "task-a", "a1", 1, split="test_task")]
    result = clean_dataset(tmp_path, rows)
    assert not result.rows("episodes")
    assert {r["reason"] for r in result.rows("rejects")} == {"invalid_value"}


def test_multimodal_mind2web_rows_keep_their_step_and_screenshot(tmp_path):
    reprs = ["[link]  Flights -> CLICK", "[textbox]  From -> TYPE: Paris"]
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])

    def row(uid: str, index: int, op: str, node: str) -> dict[str, Any]:
        return {
            "action_uid": uid, "raw_html": PAGE, "cleaned_html": PAGE,
            "operation": orjson.dumps({"op": op, "original_op": op,
                                       "value": "Paris" if op == "TYPE" else ""}).decode(),
            "pos_candidates": [orjson.dumps(candidate(node)).decode()],
            "neg_candidates": [orjson.dumps(candidate("12")).decode()],
            "website": "airline", "domain": "Travel", "subdomain": "Airlines",
            "annotation_id": "mm-1", "confirmed_task": "Book a flight from Paris",
            "screenshot": {"bytes": PNG, "path": None}, "action_reprs": reprs,
            "target_action_index": str(index), "target_action_reprs": reprs[index],
        }  # fmt: skip

    landing = tmp_path / "landing"
    types = {"pos_candidates": pa.list_(pa.string()), "neg_candidates": pa.list_(pa.string()),
             "screenshot": image, "action_reprs": pa.list_(pa.string())}  # fmt: skip
    rows = [row("m1", 1, "TYPE", "11"), row("m0", 0, "CLICK", "10")]
    shard(landing / "mind2web" / "multimodal", "test_task-00000-of-00001.parquet",
          MULTIMODAL_COLUMNS, rows, types)  # fmt: skip
    one = "multimodal~data~test_task-00000-of-00001"  # the folder's one shard
    result = run_ingest(ADAPTER, one, ingest.dataset_files(landing, ADAPTER, one), landing)

    assert result.rows("rejects") == []
    [episode] = result.rows("episodes")
    assert (episode["source_split"], episode["website"]) == ("test_task", "airline")
    click, typed = actions(result, "mind2web/mm-1")
    assert [orjson.loads(a["extra"])["step"] for a in (click, typed)] == [0, 1]
    assert orjson.loads(typed["extra"])["action_repr"] == reprs[1]
    # each step's page carries its screenshot by hash; the two steps share one, stored once
    pages = [e for e in result.rows("events") if e["kind"] == "web_observation"]
    assert [p["image_sha"] for p in pages] == [hashlib.sha256(PNG).hexdigest()] * 2
    [image] = result.rows("images")
    assert (image["bytes"], image["format"], image["width"]) == (PNG, "png", 24)
    negatives = [c for c in result.rows("web_candidates") if not c["positive"]]
    assert {c["backend_node_id"] for c in negatives} == {"12"}
