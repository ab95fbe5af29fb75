"""Items, slots and labels in the app's store: who gets which item, and labels saved atomically.

Each item has `max_annotators` slots. Handing out the next item and saving a label are each one
`BEGIN IMMEDIATE` transaction, so two annotators can never both take an item's last slot, and
an annotator is never given an item they already had (one assignment row per (item, person),
kept even when a slot is released). A trigger in the schema enforces the slot limit again.
Every read for a person is scoped to their own assignments and labels.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from bigaction_assets.annotate.assignments import (
    ASSIGNMENT_TTL_SECONDS,
    Assignments,
    NotAssigned,
    SlotLost,
)
from bigaction_assets.annotate.db import Database, timestamp
from bigaction_assets.annotate.item_catalog import ItemCatalog
from bigaction_assets.annotate.labels import check_label


class AnnotationStore(ItemCatalog, Assignments):
    def __init__(self, db: Database, assignment_ttl: float = ASSIGNMENT_TTL_SECONDS) -> None:
        self.db = db
        self.assignment_ttl = assignment_ttl

    # --- labels --------------------------------------------------------------------------------
    def save_label(self, user_id: int, item_no: int, label: Mapping[str, Any]) -> int:
        """Store (or change) this person's label on an item of theirs; returns its revision.
        The same label sent again (a retry, a second click) keeps its revision: only a change
        is news to the pipeline."""
        with self.db.write() as con:
            row = con.execute(
                """select a.state, i.kind, i.payload, i.taken, i.max_annotators, l.label,
                          l.revision from assignments a join items i using (item_no)
                   left join labels l using (item_no, user_id)
                   where a.item_no = ? and a.user_id = ?""",
                (item_no, user_id),
            ).fetchone()
            if row is None:
                raise NotAssigned(item_no)
            stored = check_label(row["kind"], orjson.loads(row["payload"]), label)
            if row["label"] is not None and orjson.loads(row["label"]) == stored:
                return row["revision"]
            if row["state"] == "released":
                if row["taken"] >= row["max_annotators"]:
                    raise SlotLost(item_no)
                con.execute("update items set taken = taken + 1 where item_no = ?", (item_no,))
            revision = con.execute(
                "update counters set value = value + 1 where name = 'label_revision' "
                "returning value"
            ).fetchone()[0]
            now = timestamp()
            con.execute(
                """insert into labels values (?, ?, ?, ?, ?, ?)
                   on conflict (item_no, user_id) do update set label = excluded.label,
                       revision = excluded.revision, updated_at = excluded.updated_at""",
                (item_no, user_id, orjson.dumps(stored).decode(), revision, now, now),
            )
            con.execute(
                "update assignments set state = 'done' where item_no = ? and user_id = ?",
                (item_no, user_id),
            )
            return revision

    def label_of(self, user_id: int, item_no: int) -> dict[str, Any] | None:
        """This person's own label on an item of theirs (NotAssigned for anyone else's)."""
        self.item_for(user_id, item_no)
        row = (
            self.db.connection()
            .execute(
                "select label from labels where item_no = ? and user_id = ?", (item_no, user_id)
            )
            .fetchone()
        )
        return orjson.loads(row["label"]) if row else None

    def labels_of(self, user_id: int, limit: int = 200) -> list[dict[str, Any]]:
        """This person's latest labels, newest first."""
        rows = self.db.connection().execute(
            """select i.item_no, i.item_id, i.kind, l.label, l.updated_at
               from labels l join items i using (item_no)
               where l.user_id = ? order by l.revision desc limit ?""",
            (user_id, limit),
        )
        return [{**dict(row), "label": orjson.loads(row["label"])} for row in rows]

    def progress(self, user_id: int) -> dict[str, int]:
        """This person's labels, the items still open to them, and how many items are full."""
        with self.db.read() as con:
            mine = con.execute("select count(*) from labels where user_id = ?", (user_id,))
            left = con.execute(
                """select count(*) from items i where i.taken < i.max_annotators
                   and not exists (select 1 from assignments a
                                   where a.item_no = i.item_no and a.user_id = ?)""",
                (user_id,),
            )
            mine, left = mine.fetchone()[0], left.fetchone()[0]
            complete, total = con.execute(
                """select count(*) filter (where n >= max_annotators), count(*) from (
                       select i.max_annotators, count(l.user_id) as n from items i
                       left join labels l using (item_no) group by i.item_no)"""
            ).fetchone()
        return {"labelled_by_you": mine, "available_to_you": left, "items_complete": complete,
                "items_total": total}  # fmt: skip

    # --- for the pipeline ----------------------------------------------------------------------
    def latest_revision(self) -> int:
        return (
            self.db.connection()
            .execute("select value from counters where name = 'label_revision'")
            .fetchone()[0]
        )

    def export_labels(self) -> Iterator[dict[str, Any]]:
        """Every label with its item, in revision order, from one snapshot."""
        with self.db.read() as con:
            rows = con.execute(
                """select i.item_id, i.kind, i.episode_id, i.payload, l.user_id, l.label,
                          l.revision, l.created_at, l.updated_at
                   from labels l join items i using (item_no) order by l.revision"""
            ).fetchall()
        for row in rows:
            yield {
                **dict(row),
                "label": orjson.loads(row["label"]),
                "payload": orjson.loads(row["payload"]),
            }
