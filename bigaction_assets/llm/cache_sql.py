"""The call cache's reads and writes, written once for both of its databases.

SQLite (cache.py, the local default) and PostgreSQL (cache_postgres.py, one cache for a
cluster's workers) hold the same tables and answer the same statements; a database differs only
in how it connects, how it opens a write transaction and how it marks a parameter. Two rules
hold on both: every write is one transaction, committed before the caller goes on, and a
finished output is replaced only by the caller that found it stale (today's rules refuse it):
neither another worker's failure of the same call nor its second output replaces it (the first
`ok` wins, so every row built from a call reads one answer).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

# Both databases read these types (SQLite by affinity: bigint as integer, double as real).
_SCHEMA = """
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
){options};
create table if not exists call_subjects (
    subject text not null,
    model text not null,
    prompt_sha text not null,
    params_sha text not null,
    primary key (subject, model, prompt_sha, params_sha)
){options};
create index if not exists call_subjects_by_call on call_subjects (model, prompt_sha, params_sha);
create table if not exists run_spend (
    run_id text primary key,
    prompt_tokens bigint not null default 0,
    completion_tokens bigint not null default 0,
    cost_usd double precision not null default 0
){options};
"""


def schema(table_options: str) -> str:
    """The cache's tables, each created with `table_options` after its columns."""
    return _SCHEMA.format(options=table_options)


COLUMNS = (
    "model, prompt_sha, params_sha, status, output, reason, detail, failed_runs, "
    "prompt_tokens, completion_tokens, cost_usd"
)

_RECORD_OK = """insert into calls values (?, ?, ?, 'ok', ?, null, null, 0, ?, ?, ?, ?, ?)
    on conflict (model, prompt_sha, params_sha) do update set
        status = 'ok', output = excluded.output, reason = null, detail = null,
        failed_runs = 0, requests = excluded.requests, prompt_tokens = excluded.prompt_tokens,
        completion_tokens = excluded.completion_tokens, cost_usd = excluded.cost_usd,
        finished_at = excluded.finished_at
    where calls.status <> 'ok' or calls.output = ?"""
_RECORD_FAILURE = """insert into calls values (?, ?, ?, 'failed', null, ?, ?, 1, ?, ?, ?, ?, ?)
    on conflict (model, prompt_sha, params_sha) do update set
        status = 'failed', output = null, reason = excluded.reason, detail = excluded.detail,
        failed_runs = calls.failed_runs + 1, requests = calls.requests + excluded.requests,
        prompt_tokens = calls.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = calls.completion_tokens + excluded.completion_tokens,
        cost_usd = calls.cost_usd + excluded.cost_usd, finished_at = excluded.finished_at
    where calls.status <> 'ok' or calls.output = ?"""
_LINK = "insert into call_subjects values (?, ?, ?, ?) on conflict do nothing"
_ADD_SPEND = """insert into run_spend values (?, ?, ?, ?) on conflict (run_id) do update set
    prompt_tokens = run_spend.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = run_spend.completion_tokens + excluded.completion_tokens,
    cost_usd = run_spend.cost_usd + excluded.cost_usd"""
_RUN_SPEND = "select prompt_tokens, completion_tokens, cost_usd from run_spend where run_id = ?"
_KEY = "model = ? and prompt_sha = ? and params_sha = ?"


@dataclass(frozen=True)
class CallKey:
    model: str
    prompt_sha: str
    params_sha: str


@dataclass(frozen=True)
class CachedCall:
    """A finished call: `status` is `ok` (with `output`) or `failed` (with `reason`)."""

    key: CallKey
    status: str
    output: str | None
    reason: str | None
    detail: str | None
    failed_runs: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Spend:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
        )


def _row(values: tuple) -> CachedCall:
    model, prompt_sha, params_sha, *rest = values
    return CachedCall(CallKey(model, prompt_sha, params_sha), *rest)


def _key_values(key: CallKey) -> tuple[str, str, str]:
    return key.model, key.prompt_sha, key.params_sha


class SqlCallCache:
    """The cache through one connection, which is the run's only writer. A database's class
    gives `con`, `_fetch`, `_writing` (a cursor inside one committed transaction) and, unless
    its parameters are written `?`, `PARAMETER`."""

    PARAMETER = "?"
    path: Any
    con: Any

    def _fetch(self, sql: str, values: Iterable[Any]) -> list[tuple]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _sql(self, statement: str) -> str:
        return statement if self.PARAMETER == "?" else statement.replace("?", self.PARAMETER)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> SqlCallCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def get(self, key: CallKey) -> CachedCall | None:
        found = self._fetch(
            self._sql(f"select {COLUMNS} from calls where {_KEY}"), _key_values(key)
        )
        return _row(found[0]) if found else None

    def get_many(self, keys: Iterable[CallKey]) -> dict[CallKey, CachedCall]:
        """Finished calls among `keys` (any number: looked up in chunks)."""
        found: dict[CallKey, CachedCall] = {}
        for chunk in _chunks(list(dict.fromkeys(keys)), 300):
            marks = ", ".join("(?, ?, ?)" for _ in chunk)
            sql = f"select {COLUMNS} from calls where (model, prompt_sha, params_sha) in ({marks})"
            for row in self._fetch(self._sql(sql), [v for k in chunk for v in _key_values(k)]):
                call = _row(row)
                found[call.key] = call
        return found

    def link(self, key: CallKey, subjects: Iterable[str]) -> None:
        """Record that these subjects' data went into the call's prompt."""
        rows = [(subject, *_key_values(key)) for subject in subjects]
        if rows:
            with self._writing() as cursor:
                cursor.executemany(self._sql(_LINK), rows)

    def record_ok(
        self, key: CallKey, output: str, subjects: Iterable[str], requests: int, spend: Spend,
        run_id: str, run_spend: Spend, stale: str | None = None,
    ) -> None:  # fmt: skip
        """Commit a successful call over an earlier failure or over the `stale` output it was
        asked again for (any other earlier output stays), its subjects and the run's spend."""
        values = (*_key_values(key), output, requests, *_spent(spend), time.time(), stale)
        self._record(_RECORD_OK, values, key, subjects, run_id, run_spend)

    def record_failure(
        self, key: CallKey, reason: str, detail: str, subjects: Iterable[str], requests: int,
        spend: Spend, run_id: str, run_spend: Spend, stale: str | None = None,
    ) -> None:  # fmt: skip
        """Commit a failed call: the reason, and one more run it failed in. Never an output,
        and over a finished one only the `stale` output it was asked again for."""
        values = (*_key_values(key), reason, detail, requests, *_spent(spend), time.time(), stale)
        self._record(_RECORD_FAILURE, values, key, subjects, run_id, run_spend)

    def _record(
        self, statement: str, values: tuple, key: CallKey, subjects: Iterable[str], run_id: str,
        run_spend: Spend,
    ) -> None:  # fmt: skip
        links = [(subject, *_key_values(key)) for subject in subjects]
        with self._writing() as cursor:
            cursor.execute(self._sql(statement), values)
            if links:
                cursor.executemany(self._sql(_LINK), links)
            self._add_spend(cursor, run_id, run_spend)

    def add_spend(self, run_id: str, spend: Spend) -> None:
        """Add tokens and cost of a call that left no row (it was deferred mid-way)."""
        with self._writing() as cursor:
            self._add_spend(cursor, run_id, spend)

    def _add_spend(self, cursor: Any, run_id: str, spend: Spend) -> None:
        if spend.tokens or spend.cost_usd:
            cursor.execute(self._sql(_ADD_SPEND), (run_id, *_spent(spend)))

    def run_spend(self, run_id: str) -> Spend:
        """What a run (all its assets and partitions) has spent so far."""
        found = self._fetch(self._sql(_RUN_SPEND), (run_id,))
        return Spend(*found[0]) if found else Spend()


def _spent(spend: Spend) -> tuple[int, int, float]:
    return spend.prompt_tokens, spend.completion_tokens, spend.cost_usd


def _chunks(items: list[CallKey], size: int) -> Iterator[list[CallKey]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
