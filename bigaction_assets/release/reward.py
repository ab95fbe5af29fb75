"""The reward sets in a release: configs `reward_judge` and `reward_preference`, one shard set
per split under the lake's one partition (`all`), holding only examples whose episodes (both
sides of a pair) are in the release, so every row joins to the released `episodes`."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import pyarrow as pa
import pyarrow.compute as pc

from bigaction_assets.lake import Lake, partition_exists
from bigaction_assets.lake_reader import read_arrow
from bigaction_assets.release.columns import REWARD_COLUMNS, expand_json, schema_with
from bigaction_assets.release.shards import ParquetShardWriter
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.schemas.reward import RewardExampleSchema

KINDS = ("judge", "preference")
PARTITION = "all"
SPLITS = ("train", "test")
COLUMNS = (
    "example_id", "kind", "origin", "item_kind", "category", "split", "episode_id", "item_id",
    "rejected_item_id", "votes", "thought_source", "record", "prompt_version",
)  # fmt: skip


class Tally(Protocol):
    rows: dict[str, dict[str, int]]

    def add(self, config: str, split: str, source: str, rows: int) -> None: ...


def released_episodes(lake: Lake, datasets: list[str]) -> pa.Array:
    ids = []
    for dataset in datasets:
        if partition_exists(lake, "standardized", "episodes", dataset):
            table = read_arrow(lake, "standardized", "episodes", dataset, columns=["episode_id"])
            ids.append(table["episode_id"].combine_chunks())
    return pa.concat_arrays(ids) if ids else pa.array([], pa.string())


def reward_configs(lake: Lake, data: Path, datasets: list[str], cap: int, tally: Tally) -> None:
    """Write the reward configs of the release into `data` (nothing when the lake has none)."""
    if not partition_exists(lake, "reward", "reward_examples", PARTITION):
        return
    table = read_arrow(lake, "reward", "reward_examples", PARTITION, columns=list(COLUMNS))
    episodes = released_episodes(lake, datasets)
    rejected_episode = pc.replace_substring_regex(
        table["rejected_item_id"], pattern="#[^#]*$", replacement=""
    )
    keep = pc.and_(
        pc.is_in(table["episode_id"], value_set=episodes),
        pc.or_(pc.is_null(rejected_episode), pc.is_in(rejected_episode, value_set=episodes)),
    )
    table = table.filter(pc.fill_null(keep, False))
    full = arrow_schema(RewardExampleSchema)
    kept = [full.field(c) for c in COLUMNS if c != "record"]
    for kind in KINDS:
        schema = schema_with(kept, REWARD_COLUMNS[kind])
        config = f"reward_{kind}"
        for split in SPLITS:
            part = table.filter(
                pc.and_(pc.equal(table["kind"], kind), pc.equal(table["split"], split))
            )
            if part.num_rows == 0:
                continue
            writer = ParquetShardWriter(data / config / PARTITION, split, schema, cap)
            writer.write(expand_json(part, "record", schema))
            writer.close()
            tally.rows[config][split] = writer.rows
            for row in pc.value_counts(part["item_kind"]).to_pylist():
                tally.add(config, split, row["values"], row["counts"])
