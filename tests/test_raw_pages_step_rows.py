"""Step rows (a Hub shard of Multimodal-Mind2Web): each row's page is cut out of its own text,
though the adapter ends a task only when the next task's first row comes, and though a task's
rows may stand out of the order of its steps."""

from __future__ import annotations

from typing import Any

import dagster as dg
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets import ingest, lake
from bigaction_assets.defs.raw.assets import raw_records
from bigaction_assets.defs.standardized.assets import GROUP, TABLES, standardized_tables
from bigaction_assets.sources.mind2web import ADAPTER
from tests.test_mind2web_hub import MULTIMODAL_COLUMNS, candidate, shard

DATASET = "multimodal~data~train-00000-of-00001"
KEY = f"mind2web.{DATASET}"


def page(task: int, step: int) -> str:
    rows = "".join(
        f'<div backend_node_id="{n}">task {task} step {step} caf\u00e9 \u00b7 row {n}</div>\\n'
        for n in range(40)
    )
    return f'<html backend_node_id="1"><body backend_node_id="2">{rows}</body></html>'


def step_row(task: int, step: int, steps: int) -> dict[str, Any]:
    reprs = [f"[link]  Step {n} -> CLICK" for n in range(steps)]
    return {
        "action_uid": f"t{task}-a{step}", "raw_html": page(task, step),
        "cleaned_html": page(task, step).replace("caf\u00e9", "cafe"),
        "operation": orjson.dumps({"op": "CLICK", "original_op": "CLICK", "value": ""}).decode(),
        "pos_candidates": [orjson.dumps(candidate(str(10 + step))).decode()],
        "neg_candidates": [orjson.dumps(candidate("99")).decode()],
        "website": "airline", "domain": "Travel", "subdomain": "Airlines",
        "annotation_id": f"task-{task}", "confirmed_task": f"Task {task}",
        "screenshot": None, "action_reprs": reprs,
        "target_action_index": str(step), "target_action_reprs": reprs[step],
    }  # fmt: skip


def test_every_step_rows_page_is_cut_out_and_comes_back(dagster_lake, ephemeral_instance):
    landing = dagster_lake.landing
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    types = {"pos_candidates": pa.list_(pa.string()), "neg_candidates": pa.list_(pa.string()),
             "screenshot": image, "action_reprs": pa.list_(pa.string())}  # fmt: skip
    rows = []
    for task, steps in enumerate((3, 1, 4)):
        order = list(range(steps))[::-1] if task == 2 else range(steps)  # the last: reversed
        rows += [step_row(task, step, steps) for step in order]
    shard(landing / "mind2web" / "multimodal", "train-00000-of-00001.parquet",
          MULTIMODAL_COLUMNS, rows, types)  # fmt: skip
    ephemeral_instance.add_dynamic_partitions("datasets", [KEY])

    def run(assets: list) -> None:
        result = dg.materialize(
            assets,
            partition_key=KEY,
            instance=ephemeral_instance,
            resources={"lake": dagster_lake.resource},
        )
        assert result.success

    run([raw_records])
    root = dagster_lake.data / "lake"
    stored = pq.read_table(lake.partition_path(root, "raw", "raw_records", KEY)).to_pylist()
    assert len(stored) == len(rows)
    for row in stored:  # its two pages, out of its own text
        cuts = orjson.loads(row["pages"])
        assert sorted(c[2] for c in cuts) == ["cleaned_html", "raw_html"], row["record_index"]
    files = ingest.dataset_files(landing, ADAPTER, DATASET)
    landed = [r["text"] for r in ingest.raw_records(ADAPTER, DATASET, files, landing)]
    read = ingest.raw_partition_rows(root, KEY, unreadable=False)
    assert [r["text"] for r in read] == landed

    run([standardized_tables])  # the pass's tables
    taken = {name: lake.partition_path(root, GROUP, name, KEY).read_bytes() for name in TABLES}
    run([standardized_tables])  # from the raw table, its pages put back
    again = {name: lake.partition_path(root, GROUP, name, KEY).read_bytes() for name in TABLES}
    assert again == taken
    episodes = pq.read_table(lake.partition_path(root, GROUP, "episodes", KEY))
    assert episodes.num_rows == 3
