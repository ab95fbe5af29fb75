"""Generated thoughts into events for SFT: recorded thoughts first, generated ones second."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

import duckdb

from bigaction_assets.event_marks import GENERATED
from bigaction_assets.lake import partition_path


def add_generated_thoughts(
    con: duckdb.DuckDBPyConnection,
    lake: Path,
    key: str,
    batch: Iterable[tuple[Mapping[str, Any], Sequence[MutableMapping[str, Any]]]],
) -> None:
    """Give each event of the batch with no recorded thought its generated one, if the thoughts
    table of partition `key` holds it, marking it `thought_generated`. A recorded thought is
    never replaced."""
    path = partition_path(lake, "thoughts", "thoughts", key)
    batch = list(batch)
    if not path.exists() or not batch:
        return
    episode_ids = [str(episode["episode_id"]) for episode, _ in batch]
    source = path.as_posix().replace("'", "''")
    found = con.execute(
        f"""select episode_id, idx, thought from read_parquet('{source}')
        where status = 'generated' and episode_id in (select unnest(?))""",
        [episode_ids],
    ).fetchall()
    thoughts = {(episode_id, idx): thought for episode_id, idx, thought in found}
    for _, events in batch:
        for event in events:
            if (event.get("description") or "").strip():
                continue
            thought = thoughts.get((event["episode_id"], event["idx"]))
            if thought:
                event["description"] = thought
                event[GENERATED] = True
