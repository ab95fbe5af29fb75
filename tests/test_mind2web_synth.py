"""The benchmarks' Mind2Web generator: its files ingest cleanly, at the sizes asked for."""

from __future__ import annotations

import sys
from pathlib import Path
from statistics import mean

import orjson
import pytest
from conftest import land_file

from bigaction_assets.sources.mind2web import ADAPTER
from bigaction_assets.sources.mind2web_fields import find_marked_node

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from mind2web_synth import iter_tasks, write_tasks


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return list(iter_tasks(10, 5, html_kb=30, seed=3))


def test_file_ingests_without_rejects(tmp_path, ingest_dataset, write_std_tables):
    landing = tmp_path / "landing"
    path = land_file(landing, "mind2web", "train_bench.json", b"")
    size = write_tasks(path, 4, 3, html_kb=25, seed=1)
    assert size == path.stat().st_size
    assert path.read_bytes().count(b"\n") == 4 + 2  # one task per line, inside the brackets
    result = ingest_dataset(ADAPTER, "train_bench", [path], landing)
    assert result.rows("rejects") == []
    assert len(result.rows("episodes")) == 4
    api_actions = [e for e in result.rows("events") if e["kind"] == "api_action"]
    assert len(api_actions) == 12
    assert all(orjson.loads(a["kwargs"])["bid"] for a in api_actions)
    write_std_tables(tmp_path / "lake", "mind2web.train_bench", result.tables)


def test_targets_agree_across_raw_cleaned_and_candidates(tasks):
    hidden = 0
    for task in tasks:
        assert len(task["actions"]) == len(task["action_reprs"]) == 5
        for action in task["actions"]:
            marked = find_marked_node(action["raw_html"], action["action_uid"])
            assert marked is not None
            in_cleaned = f'backend_node_id="{marked}"' in action["cleaned_html"]
            if action["pos_candidates"]:
                [positive] = action["pos_candidates"]
                assert positive["backend_node_id"] == marked and in_cleaned
            else:  # the target was hidden at capture time: no box, not in the cleaned page
                hidden += 1
                assert not in_cleaned
            negatives = {c["backend_node_id"] for c in action["neg_candidates"]}
            assert marked not in negatives
            assert len(negatives) == len(action["neg_candidates"]) == 50
    assert hidden, "expected some action whose target was hidden at capture time"


def test_every_operation_occurs(tasks):
    operations = {a["operation"]["original_op"] for t in tasks for a in t["actions"]}
    assert operations == {"CLICK", "TYPE", "SELECT", "HOVER", "ENTER"}
    reprs = [r for t in tasks for r in t["action_reprs"]]
    assert any(r.startswith("[combobox]") and " -> SELECT: " in r for r in reprs)


@pytest.mark.parametrize("html_kb", [40, 400])
def test_pages_have_the_size_asked_for(html_kb):
    actions = [a for t in iter_tasks(2, 3, html_kb=html_kb, seed=5) for a in t["actions"]]
    raw = mean(len(a["raw_html"]) for a in actions)
    cleaned = mean(len(a["cleaned_html"]) for a in actions)
    assert 0.95 <= raw / (html_kb * 1024) <= 1.2
    assert 0.12 <= cleaned / raw <= 0.3


def test_same_arguments_give_the_same_bytes(tmp_path):
    paths = [tmp_path / f"{n}.json" for n in range(3)]
    for path, seed in zip(paths, (7, 7, 8), strict=True):
        write_tasks(path, 2, 2, html_kb=25, seed=seed)
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()
