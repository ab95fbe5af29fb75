"""The items in the app's store: loading new ones, refreshing known ones, forgetting an
episode's."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bigaction_assets.annotate.db import Database, timestamp


class ItemCatalog:
    """The items part of `AnnotationStore`: what there is to label."""

    db: Database

    def load_items(self, items: Iterable[Mapping[str, Any]], max_annotators: int = 3) -> int:
        """Insert new items, refresh the content of known ones (their labels stay); returns
        how many were new."""
        before = self.count_items()
        with self.db.write() as con:
            con.executemany(
                """insert into items (item_id, kind, episode_id, payload, page_html,
                                      max_annotators, loaded_at)
                   values (:item_id, :kind, :episode_id, :payload, :page_html, :max, :now)
                   on conflict (item_id) do update set payload = excluded.payload,
                       page_html = excluded.page_html, kind = excluded.kind""",
                (
                    {**{k: item[k] for k in ("item_id", "kind", "episode_id", "payload")},
                     "page_html": item.get("page_html"), "max": max_annotators, "now": timestamp()}
                    for item in items
                ),
            )  # fmt: skip
        return self.count_items() - before

    def count_items(self) -> int:
        return self.db.connection().execute("select count(*) from items").fetchone()[0]

    def forget_episodes(self, episode_ids: Iterable[str]) -> int:
        """Delete the items of these episodes with their slots and labels; items deleted."""
        ids = sorted(set(episode_ids))
        if not ids:
            return 0
        with self.db.write() as con:
            deleted = 0
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                nos = f"select item_no from items where episode_id in ({marks})"
                con.execute(f"delete from labels where item_no in ({nos})", chunk)
                con.execute(f"delete from assignments where item_no in ({nos})", chunk)
                deleted += con.execute(
                    f"delete from items where episode_id in ({marks})", chunk
                ).rowcount
        return deleted

    def items_of(self, episode_ids: Iterable[str]) -> set[str]:
        """Ids of the items the store holds from these episodes."""
        wanted = set(episode_ids)
        rows = self.db.connection().execute("select item_id, episode_id from items")
        return {item_id for item_id, episode_id in rows if episode_id in wanted}
