"""The LLM call cache on PostgreSQL: one cache that every worker of a cluster shares.

The same tables and the same interface as the SQLite cache (cache.py), which stays the local
default. Workers on many machines write at once here, so two rules hold that a single machine
rarely needs: a finished output is never replaced, neither by another worker's failure of the
same call nor by its second output (the first `ok` wins, so every row built from the call
reads one answer); and every write is one transaction, committed before the caller goes on.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import psycopg2

from bigaction_assets.llm.cache import _COLUMNS, CachedCall, CallKey, Spend, _chunks, _row

SCHEMA = """
create table if not exists calls (
    model text not null,
    prompt_sha text not null,
    params_sha text not null,
    status text not null check (status in ('ok', 'failed')),
    output text,
    reason text,
    detail text,
    failed_runs integer not null default 0,
    requests integer not null default 0,
    prompt_tokens bigint not null default 0,
    completion_tokens bigint not null default 0,
    cost_usd double precision not null default 0,
    finished_at double precision not null,
    primary key (model, prompt_sha, params_sha)
);
create table if not exists call_subjects (
    subject text not null,
    model text not null,
    prompt_sha text not null,
    params_sha text not null,
    primary key (subject, model, prompt_sha, params_sha)
);
create index if not exists call_subjects_by_call on call_subjects (model, prompt_sha, params_sha);
create table if not exists run_spend (
    run_id text primary key,
    prompt_tokens bigint not null default 0,
    completion_tokens bigint not null default 0,
    cost_usd double precision not null default 0
);
"""
SCHEMA_LOCK = 7_316_001  # an advisory lock id: workers starting at once create the tables once


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql:", "postgresql+"))


def libpq_dsn(url: str) -> str:
    """SQLAlchemy's `postgresql+psycopg2://` (Dagster's setting) as libpq reads it."""
    scheme, _, rest = url.partition("://")
    return f"{scheme.split('+')[0]}://{rest}"


def connect(url: str) -> Any:
    """A connection to the cache database, its tables created when missing."""
    con = psycopg2.connect(libpq_dsn(url))
    with con, con.cursor() as cursor:
        cursor.execute("select pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        cursor.execute(SCHEMA)
    return con


class PostgresCallCache:
    """The shared cache through one connection per run (CallCache's interface)."""

    def __init__(self, url: str) -> None:
        self.path = url
        self.con = connect(url)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> PostgresCallCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _fetch(self, sql: str, values: Iterable[Any]) -> list[tuple]:
        with self.con, self.con.cursor() as cursor:
            cursor.execute(sql, tuple(values))
            return cursor.fetchall()

    def get(self, key: CallKey) -> CachedCall | None:
        found = self._fetch(
            f"select {_COLUMNS} from calls where model = %s and prompt_sha = %s and "
            "params_sha = %s",
            (key.model, key.prompt_sha, key.params_sha),
        )
        return _row(found[0]) if found else None

    def get_many(self, keys: Iterable[CallKey]) -> dict[CallKey, CachedCall]:
        found: dict[CallKey, CachedCall] = {}
        for chunk in _chunks(list(dict.fromkeys(keys)), 300):
            marks = ", ".join("(%s, %s, %s)" for _ in chunk)
            values = [v for k in chunk for v in (k.model, k.prompt_sha, k.params_sha)]
            sql = f"select {_COLUMNS} from calls where (model, prompt_sha, params_sha) in ({marks})"
            for row in self._fetch(sql, values):
                call = _row(row)
                found[call.key] = call
        return found

    def link(self, key: CallKey, subjects: Iterable[str]) -> None:
        rows = [(s, key.model, key.prompt_sha, key.params_sha) for s in subjects]
        if rows:
            with self.con, self.con.cursor() as cursor:
                _link(cursor, rows)

    def record_ok(
        self, key: CallKey, output: str, subjects: Iterable[str], requests: int, spend: Spend,
        run_id: str, run_spend: Spend,
    ) -> None:  # fmt: skip
        """Commit a successful call over an earlier failure; an earlier output stays."""
        with self.con, self.con.cursor() as cursor:
            cursor.execute(
                """insert into calls
                values (%s, %s, %s, 'ok', %s, null, null, 0, %s, %s, %s, %s, %s)
                on conflict (model, prompt_sha, params_sha) do update set
                    status = 'ok', output = excluded.output, reason = null, detail = null,
                    failed_runs = 0, requests = excluded.requests,
                    prompt_tokens = excluded.prompt_tokens,
                    completion_tokens = excluded.completion_tokens,
                    cost_usd = excluded.cost_usd, finished_at = excluded.finished_at
                where calls.status <> 'ok'""",
                (key.model, key.prompt_sha, key.params_sha, output, requests,
                 spend.prompt_tokens, spend.completion_tokens, spend.cost_usd, time.time()),
            )  # fmt: skip
            _link(cursor, [(s, key.model, key.prompt_sha, key.params_sha) for s in subjects])
            _add_spend(cursor, run_id, run_spend)

    def record_failure(
        self, key: CallKey, reason: str, detail: str, subjects: Iterable[str], requests: int,
        spend: Spend, run_id: str, run_spend: Spend,
    ) -> None:  # fmt: skip
        """Commit a failed call, one more run it failed in; never over a finished output."""
        with self.con, self.con.cursor() as cursor:
            cursor.execute(
                """insert into calls
                values (%s, %s, %s, 'failed', null, %s, %s, 1, %s, %s, %s, %s, %s)
                on conflict (model, prompt_sha, params_sha) do update set
                    status = 'failed', output = null, reason = excluded.reason,
                    detail = excluded.detail, failed_runs = calls.failed_runs + 1,
                    requests = calls.requests + excluded.requests,
                    prompt_tokens = calls.prompt_tokens + excluded.prompt_tokens,
                    completion_tokens = calls.completion_tokens + excluded.completion_tokens,
                    cost_usd = calls.cost_usd + excluded.cost_usd,
                    finished_at = excluded.finished_at
                where calls.status <> 'ok'""",
                (key.model, key.prompt_sha, key.params_sha, reason, detail, requests,
                 spend.prompt_tokens, spend.completion_tokens, spend.cost_usd, time.time()),
            )  # fmt: skip
            _link(cursor, [(s, key.model, key.prompt_sha, key.params_sha) for s in subjects])
            _add_spend(cursor, run_id, run_spend)

    def add_spend(self, run_id: str, spend: Spend) -> None:
        with self.con, self.con.cursor() as cursor:
            _add_spend(cursor, run_id, spend)

    def run_spend(self, run_id: str) -> Spend:
        found = self._fetch(
            "select prompt_tokens, completion_tokens, cost_usd from run_spend where run_id = %s",
            (run_id,),
        )
        return Spend(*found[0]) if found else Spend()


def _link(cursor: Any, rows: list[tuple[str, str, str, str]]) -> None:
    if rows:
        cursor.executemany(
            "insert into call_subjects values (%s, %s, %s, %s) on conflict do nothing", rows
        )


def _add_spend(cursor: Any, run_id: str, spend: Spend) -> None:
    if not spend.tokens and not spend.cost_usd:
        return
    cursor.execute(
        """insert into run_spend values (%s, %s, %s, %s) on conflict (run_id) do update set
            prompt_tokens = run_spend.prompt_tokens + excluded.prompt_tokens,
            completion_tokens = run_spend.completion_tokens + excluded.completion_tokens,
            cost_usd = run_spend.cost_usd + excluded.cost_usd""",
        (run_id, spend.prompt_tokens, spend.completion_tokens, spend.cost_usd),
    )


def erase_subjects(url: str, subjects: list[str]) -> int:
    """forget.erase_subjects on the shared cache: the subjects' links, then every call no
    other subject shares; the tables are then rewritten (VACUUM FULL) so the erased text does
    not stay in their files as dead rows. Calls erased."""
    con = connect(url)
    try:
        with con, con.cursor() as cursor:
            cursor.execute(
                """create temp table orphaned on commit drop as
                select distinct model, prompt_sha, params_sha from call_subjects
                where subject = any(%s)""",
                (subjects,),
            )
            cursor.execute("delete from call_subjects where subject = any(%s)", (subjects,))
            cursor.execute(
                """delete from calls where (model, prompt_sha, params_sha) in (
                    select model, prompt_sha, params_sha from orphaned o where not exists (
                        select 1 from call_subjects s where s.model = o.model
                        and s.prompt_sha = o.prompt_sha and s.params_sha = o.params_sha))"""
            )
            erased = cursor.rowcount
        con.autocommit = True  # VACUUM refuses to run in a transaction
        with con.cursor() as cursor:
            cursor.execute("vacuum full calls, call_subjects")
        return erased
    finally:
        con.close()


def subjects_present(url: str, subjects: list[str]) -> int:
    con = connect(url)
    try:
        with con, con.cursor() as cursor:
            cursor.execute(
                "select count(*) from call_subjects where subject = any(%s)", (subjects,)
            )
            return cursor.fetchone()[0]
    finally:
        con.close()
