"""LLaMA-Factory files of the reward sets: JSONL per set and split, and `dataset_info.json`.

Entries follow LLaMA-Factory's sharegpt layout: the judge set maps `messages` to
`conversations` and `system`; the preference set also maps `chosen` and `rejected` and says
`"ranking": true`, which makes it pairwise data for reward modelling and DPO.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bigaction_assets.durable import write_durably

DATASET_PREFIX = "bigaction"
COLUMNS = {
    "judge": {"messages": "conversations", "system": "system"},
    "preference": {
        "messages": "conversations", "chosen": "chosen", "rejected": "rejected",
        "system": "system",
    },
}  # fmt: skip


def dataset_info(files: Mapping[tuple[str, str], str]) -> dict[str, Any]:
    """The entry of each written file, named `bigaction_<set>_<split>`."""
    info: dict[str, Any] = {}
    for (kind, split), name in sorted(files.items()):
        entry: dict[str, Any] = {"file_name": name, "formatting": "sharegpt"}
        if kind == "preference":
            entry["ranking"] = True
        entry["columns"] = dict(COLUMNS[kind])
        info[f"{DATASET_PREFIX}_{kind}_{split}"] = entry
    return info


def write_reward_files(rows: Iterable[Mapping[str, Any]], out: Path) -> dict[str, int]:
    """Write every (set, split) file and the index; returns rows per file name."""
    lines: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        lines.setdefault((row["kind"], row["split"]), []).append(row["record"])
    names = {key: f"{key[0]}_{key[1]}.jsonl" for key in lines}
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.jsonl"):
        if stale.name not in names.values():
            stale.unlink()
    for key, records in lines.items():
        write_durably(out / names[key], "".join(r + "\n" for r in records).encode())
    info = json.dumps(dataset_info(names), indent=2, ensure_ascii=False) + "\n"
    write_durably(out / "dataset_info.json", info.encode())
    return {names[key]: len(records) for key, records in sorted(lines.items())}
