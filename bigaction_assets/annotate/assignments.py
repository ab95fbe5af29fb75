"""Who labels which item: each person's next item within the item's slots, and the items a
person was given."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from bigaction_assets.annotate.db import Database

ASSIGNMENT_TTL_SECONDS = 3600.0  # an item left open this long frees its slot for others


class NotAssigned(LookupError):
    """The item is not one of this person's (or does not exist): shown as 404, never 403, so
    nobody learns which items others hold."""


class SlotLost(RuntimeError):
    """This person's slot was released after its time ran out and the item filled up since."""


@dataclass(frozen=True)
class Item:
    item_no: int
    item_id: str
    kind: str
    episode_id: str
    payload: dict[str, Any]
    page_html: str | None


def _item(row: Mapping[str, Any]) -> Item:
    return Item(
        row["item_no"], row["item_id"], row["kind"], row["episode_id"],
        orjson.loads(row["payload"]), row["page_html"],
    )  # fmt: skip


class Assignments:
    """The slots part of `AnnotationStore`: handing items out and finding a person's items."""

    db: Database
    assignment_ttl: float

    def next_item(self, user_id: int, kind: str | None = None) -> Item | None:
        """The item this person should label now: their open one, else a new slot on the item
        closest to complete (so items finish and reach the training data); None when none is
        left for them."""
        with self.db.write() as con:
            self._release_expired(con)
            row = con.execute(
                """select i.* from assignments a join items i using (item_no)
                   where a.user_id = ? and a.state = 'open' and (? is null or i.kind = ?)
                   order by a.assigned_at limit 1""",
                (user_id, kind, kind),
            ).fetchone()
            if row is not None:
                return _item(row)
            row = con.execute(
                """select i.* from items i
                   where i.taken < i.max_annotators and (? is null or i.kind = ?)
                     and not exists (select 1 from assignments a
                                     where a.item_no = i.item_no and a.user_id = ?)
                   order by i.taken desc, i.item_no limit 1""",
                (kind, kind, user_id),
            ).fetchone()
            if row is None:
                return None
            con.execute(
                "insert into assignments values (?, ?, 'open', ?)",
                (row["item_no"], user_id, time.time()),
            )
            con.execute("update items set taken = taken + 1 where item_no = ?", (row["item_no"],))
            return _item(row)

    def _release_expired(self, con: Any) -> None:
        cutoff = time.time() - self.assignment_ttl
        expired = con.execute(
            "select item_no, user_id from assignments where state = 'open' and assigned_at < ?",
            (cutoff,),
        ).fetchall()
        for item_no, user_id in expired:
            con.execute(
                "update assignments set state = 'released' where item_no = ? and user_id = ?",
                (item_no, user_id),
            )
            con.execute("update items set taken = taken - 1 where item_no = ?", (item_no,))

    def item_for(self, user_id: int, item_no: int) -> Item:
        """An item this person was given (open, done or released); NotAssigned otherwise."""
        row = (
            self.db.connection()
            .execute(
                """select i.* from items i join assignments a using (item_no)
                   where i.item_no = ? and a.user_id = ?""",
                (item_no, user_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotAssigned(item_no)
        return _item(row)
