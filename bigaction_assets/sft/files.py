"""SFT training files: one JSONL per format and split, plus LLaMA-Factory's dataset_info.json."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from bigaction_assets.durable import replace_unless_same
from bigaction_assets.lake import query_connection, stream_rows
from bigaction_assets.quality import has_table, relation
from bigaction_assets.schemas.sft import SFT_FORMATS
from bigaction_assets.sft.dedup import SeenContent
from bigaction_assets.sft.sharegpt_format import dataset_info

GROUP = "sft"
DATASET_PREFIX = "bigaction"


def _atomic(stack: ExitStack, path: Path) -> IO[bytes]:
    """A file that appears at `path`, whole, only when the stack closes without error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    handle = open(tmp, "wb")  # noqa: SIM115 - closed and renamed by the callback below

    def finish(exc_type: type | None, *_: Any) -> None:
        handle.close()
        if exc_type is None:
            replace_unless_same(tmp, path)  # an unchanged file keeps its mtime
        else:
            tmp.unlink(missing_ok=True)

    stack.push(finish)
    return handle


def write_sft_files(lake: Path, out: Path) -> dict[str, Any]:
    """Every example of every dataset, minus exact duplicates across datasets, as
    `<out>/<format>/<split>.jsonl` (sorted by example id, so reruns give the same bytes).

    Returns counts per split, duplicates dropped and the files written.
    """
    counts: Counter[str] = Counter()
    dropped = 0
    files: dict[str, Path] = {}
    if not has_table(lake, "sft_examples", group=GROUP):
        return {"examples_by_split": {}, "duplicates_dropped": 0, "files": []}
    with query_connection() as con, ExitStack() as stack, SeenContent() as seen:
        sql = f"""select split, content_sha, {", ".join(SFT_FORMATS)}
            from {relation(lake, "sft_examples", group=GROUP)} order by example_id"""
        handles: dict[tuple[str, str], IO[bytes]] = {}
        for split, content_sha, *renderings in stream_rows(con, sql):
            if not seen.add(bytes.fromhex(content_sha[:32])):
                dropped += 1
                continue
            counts[split] += 1
            for name, text in zip(SFT_FORMATS, renderings, strict=True):
                if (name, split) not in handles:
                    files[f"{name}/{split}"] = out / name / f"{split}.jsonl"
                    handles[name, split] = _atomic(stack, files[f"{name}/{split}"])
                handles[name, split].write(text.encode() + b"\n")
        splits = sorted({split for _, split in handles})
        info = dataset_info({f"{DATASET_PREFIX}_{s}": f"{s}.jsonl" for s in splits})
        info_path = out / "sharegpt" / "dataset_info.json"
        _atomic(stack, info_path).write(json.dumps(info, indent=2).encode() + b"\n")
    written = {*files.values(), info_path}
    for stale in out.glob("*/*.jsonl"):  # a split or format that is gone must not linger
        if stale not in written:
            stale.unlink()
    return {
        "examples_by_split": dict(sorted(counts.items())),
        "duplicates_dropped": dropped,
        "files": sorted(str(path) for path in [*files.values(), info_path]),
    }
