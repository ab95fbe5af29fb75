"""All reward examples from the lake: bundled annotated reward episodes, the app's labels on
proactive turns and on web steps; and what each source contributed, for the asset's metadata."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson

from bigaction_assets.episodes.reader import iter_episodes, standardized_datasets
from bigaction_assets.lake import Lake
from bigaction_assets.lake_reader import iter_table_rows, table_files
from bigaction_assets.reward.examples import RewardSettings, judge_rows, proactive_pairs, web_pairs
from bigaction_assets.reward.judgements import app_judgements, reward_episode_judgement
from bigaction_assets.reward.rules import Judgement
from bigaction_assets.reward.split import assign_splits
from bigaction_assets.sources import PARTITION_SEPARATOR
from bigaction_assets.sources.proactive import ADAPTER, is_reward_dataset

GROUP = "reward"
ITEM_COLUMNS = ["item_id", "item_kind", "episode_id", "payload", "page_html"]
LABEL_COLUMNS = [
    "item_id", "item_kind", "episode_id", "annotator_id", "verdict", "accepted_tasks",
    "help_needed",
]  # fmt: skip


def bundled_judgements(lake: Lake) -> Iterator[Judgement]:
    """The judgement of every episode of the proactive source's `reward_*` datasets."""
    for key in standardized_datasets(lake):
        adapter, _, dataset = key.partition(PARTITION_SEPARATOR)
        if adapter != ADAPTER.name or not is_reward_dataset(dataset):
            continue
        for episode, events, _ in iter_episodes(lake, key, with_pages=False):
            judged = reward_episode_judgement(episode, events)
            if judged is not None:
                yield judged


def _table(lake: Lake, asset: str, columns: list[str]) -> list[dict[str, Any]]:
    if not table_files(lake, GROUP, asset):
        return []
    return list(iter_table_rows(lake, GROUP, asset, columns))


def build_reward_examples(
    lake: Lake, settings: RewardSettings
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows of `reward_examples`, counts for the metadata)."""
    items = {row["item_id"]: row for row in _table(lake, "annotation_items", ITEM_COLUMNS)}
    for row in items.values():
        row["payload"] = orjson.loads(row["payload"])
    labels = _table(lake, "annotations", LABEL_COLUMNS)
    turns = [row for row in labels if row["item_kind"] == "proactive_turn"]
    steps = [row for row in labels if row["item_kind"] == "web_step" and row["item_id"] in items]
    bundled = list(bundled_judgements(lake))
    from_app, skipped = app_judgements({k: v["payload"] for k, v in items.items()}, turns)
    judged = bundled + from_app
    splits = assign_splits(judged, settings.test_per_category, settings.seed)
    rows = [
        *judge_rows(judged, splits),
        *proactive_pairs(judged, splits),
        *web_pairs(items, steps, settings),
    ]
    counts: dict[str, Any] = {
        "judgements_by_origin": dict(Counter(j.origin for j in judged)),
        "judge_by_category_and_split": dict(
            sorted(
                Counter(
                    f"{r['category']}/{r['split']}" for r in rows if r["kind"] == "judge"
                ).items()
            )
        ),
        "pairs_by_item_kind_and_split": dict(
            sorted(
                Counter(
                    f"{r['item_kind']}/{r['split']}" for r in rows if r["kind"] == "preference"
                ).items()
            )
        ),
        "not_judged": skipped,
    }
    return rows, counts
