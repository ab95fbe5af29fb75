"""The SFT benchmark's landing file: copies of the bundled samples under new ids, and with
`distinct` no text a model is shown repeats across copies, while each copy keeps its shape."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_scripts import load_benchmark
from conftest import run_ingest

from bigaction_assets.sources.adp import ADAPTER


def ingested(path: Path, landing: Path) -> list[dict]:
    result = run_ingest(ADAPTER, path.stem, [path], landing)
    assert result.rows("rejects") == []
    return result.rows("events")


def shown(event: dict) -> list[str]:
    texts = [event.get("content") or "", event.get("description") or ""]
    texts += [v for v in json.loads(event.get("kwargs") or "{}").values() if isinstance(v, str)]
    return [text for text in texts if text]


def test_distinct_copies_repeat_no_text_and_keep_their_shape(tmp_path):
    sft = load_benchmark("sft")
    landing = tmp_path / "landing"
    plain, distinct = landing / "adp" / "plain.jsonl", landing / "adp" / "distinct.jsonl"
    sft.write_landing(plain, 10, "swe-smith")
    sft.write_landing(distinct, 10, "swe-smith", distinct=True)
    plain_events, distinct_events = ingested(plain, landing), ingested(distinct, landing)
    shape = [(e["kind"], e["actor"], e.get("function")) for e in plain_events]
    assert [(e["kind"], e["actor"], e.get("function")) for e in distinct_events] == shape
    copy_of = {f"distinct/bench-{n}": n for n in range(10)}
    texts: dict[str, set[int]] = {}
    for event in distinct_events:
        for text in shown(event):
            texts.setdefault(text, set()).add(copy_of[event["episode_id"]])
    assert texts and all(len(copies) == 1 for copies in texts.values())
    repeated = {}
    for event in plain_events:
        for text in shown(event):
            repeated.setdefault(text, set()).add(event["episode_id"])
    assert any(len(episodes) > 1 for episodes in repeated.values()), "the plain copies repeat"
