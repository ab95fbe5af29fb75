"""Generated thoughts into events for SFT: recorded thoughts first, generated ones second."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from typing import Any

import duckdb

from bigaction_assets.event_marks import GENERATED
from bigaction_assets.lake import Lake, partition_exists, partition_url


def add_generated_thoughts(
    con: duckdb.DuckDBPyConnection,
    lake: Lake,
    key: str,
    batch: Iterable[tuple[Mapping[str, Any], Sequence[MutableMapping[str, Any]]]],
) -> None:
    """Give each event of the batch with no recorded thought its generated one, if the thoughts
    table of partition `key` holds it, marking it `thought_generated`. A recorded thought is
    never replaced."""
    batch = list(batch)
    if not batch or not partition_exists(lake, "thoughts", "thoughts", key):
        return
    episode_ids = [str(episode["episode_id"]) for episode, _ in batch]
    source = partition_url(lake, "thoughts", "thoughts", key).replace("'", "''")
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
