"""The annotation app's SQLite file: schema, one connection per thread, short write transactions.

WAL lets readers go on while one writer commits; every write is a `BEGIN IMMEDIATE`
transaction, so it takes the write lock before it reads what it decides on (a free slot, an
assignment) and no two writers can decide on the same state. `synchronous=FULL`: a label is
on disk before the annotator is told it was saved.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000

SCHEMA = """
create table if not exists users (
    user_id integer primary key,
    username text not null unique collate nocase,
    password_hash text not null,
    active integer not null default 1,
    created_at text not null
);
create table if not exists sessions (
    token_hash text primary key,
    user_id integer not null references users(user_id) on delete cascade,
    csrf_token text not null,
    created_at real not null,
    last_seen real not null
);
create table if not exists login_failures (
    scope text not null,          -- 'account' or 'address'
    key text not null,
    at real not null
);
create index if not exists login_failures_key on login_failures(scope, key, at);
create table if not exists items (
    item_no integer primary key,
    item_id text not null unique,  -- `<episode id>#<event idx>`
    kind text not null check (kind in ('web_step', 'proactive_turn')),
    episode_id text not null,
    payload text not null,         -- JSON: what the item page shows
    page_html text,                -- the cleaned page of a web step, shown in a sandbox
    max_annotators integer not null check (max_annotators >= 1),
    taken integer not null default 0,
    loaded_at text not null
);
create index if not exists items_open on items(kind, taken, item_no);
create index if not exists items_episode on items(episode_id);
create table if not exists assignments (
    item_no integer not null references items(item_no) on delete cascade,
    user_id integer not null references users(user_id),
    state text not null check (state in ('open', 'done', 'released')),
    assigned_at real not null,
    primary key (item_no, user_id)
);
create index if not exists assignments_user on assignments(user_id, state);
-- the invariant itself, whatever the code above it does: never more holders than slots
create trigger if not exists assignments_within_slots before insert on assignments
when (select count(*) from assignments
      where item_no = new.item_no and state != 'released')
     >= (select max_annotators from items where item_no = new.item_no)
begin
    select raise(abort, 'item has no free slot');
end;
create table if not exists labels (
    item_no integer not null references items(item_no) on delete cascade,
    user_id integer not null references users(user_id),
    label text not null,           -- JSON, checked by annotate.labels
    revision integer not null unique,
    created_at text not null,
    updated_at text not null,
    primary key (item_no, user_id)
);
create table if not exists counters (name text primary key, value integer not null);
insert or ignore into counters values ('label_revision', 0);
"""


class Database:
    """One SQLite file; each thread gets its own connection (sqlite3 connections are not
    shared across threads)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._writer = threading.Lock()
        self.connection().executescript(f"begin immediate; {SCHEMA} commit;")

    def connection(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
            con.row_factory = sqlite3.Row
            con.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
            con.execute("pragma journal_mode = wal")
            con.execute("pragma synchronous = full")
            con.execute("pragma foreign_keys = on")
            self._local.con = con
        return con

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the lock from its first statement; rolled back on error.

        Threads of one process queue on a lock of their own first: SQLite's busy handler makes
        a waiting writer sleep in growing steps (up to 100 ms), while a queued thread starts the
        moment the previous one commits. Other processes still wait on SQLite's lock.
        """
        con = self.connection()
        with self._writer:
            con.execute("begin immediate")
            try:
                yield con
            except BaseException:
                con.execute("rollback")
                raise
            con.execute("commit")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: one consistent snapshot for several queries."""
        con = self.connection()
        con.execute("begin")
        try:
            yield con
        finally:
            con.execute("rollback")

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


def timestamp() -> str:
    """The time as the store writes it: UTC, ISO 8601 to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
