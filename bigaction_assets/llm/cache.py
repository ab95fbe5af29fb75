"""The durable LLM call cache: one SQLite file, one row per (model, prompt, parameters).

Every finished call is committed at once, in its own transaction, so a run killed at any moment
loses only the calls in flight. WAL journaling lets readers (another partition's run, a user's
shell) read while one connection writes; with `synchronous=NORMAL` a commit survives the
process being killed (SIGKILL), and only a power cut may lose the last commits — which then
cost their calls again, never a wrong row. A failure is stored as a failure with its reason,
never as an output, and counts the runs it failed in, so later runs retry it a bounded number
of times. Prompts are built from people's data: each call records the subjects (episode ids)
its prompt came from, so erasure can remove them (`erase_subjects`).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

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
    prompt_tokens integer not null default 0,
    completion_tokens integer not null default 0,
    cost_usd real not null default 0,
    finished_at real not null,
    primary key (model, prompt_sha, params_sha)
) without rowid;
create table if not exists call_subjects (
    subject text not null,
    model text not null,
    prompt_sha text not null,
    params_sha text not null,
    primary key (subject, model, prompt_sha, params_sha)
) without rowid;
create index if not exists call_subjects_by_call on call_subjects (model, prompt_sha, params_sha);
create table if not exists run_spend (
    run_id text primary key,
    prompt_tokens integer not null default 0,
    completion_tokens integer not null default 0,
    cost_usd real not null default 0
) without rowid;
"""


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


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the cache at `path` (created with its tables when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    con.execute("pragma journal_mode = wal")
    con.execute("pragma synchronous = normal")
    con.execute("pragma busy_timeout = 60000")
    con.executescript(SCHEMA)
    return con


_COLUMNS = (
    "model, prompt_sha, params_sha, status, output, reason, detail, failed_runs, "
    "prompt_tokens, completion_tokens, cost_usd"
)


def _row(values: tuple) -> CachedCall:
    model, prompt_sha, params_sha, *rest = values
    return CachedCall(CallKey(model, prompt_sha, params_sha), *rest)


class CallCache:
    """The cache through one connection, which is the run's only writer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con = connect(path)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> CallCache:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def get(self, key: CallKey) -> CachedCall | None:
        found = self.con.execute(
            f"select {_COLUMNS} from calls where model = ? and prompt_sha = ? and params_sha = ?",
            (key.model, key.prompt_sha, key.params_sha),
        ).fetchone()
        return _row(found) if found else None

    def get_many(self, keys: Iterable[CallKey]) -> dict[CallKey, CachedCall]:
        """Finished calls among `keys` (any number: looked up in chunks)."""
        found: dict[CallKey, CachedCall] = {}
        for chunk in _chunks(list(dict.fromkeys(keys)), 300):
            where = " or ".join("(model = ? and prompt_sha = ? and params_sha = ?)" for _ in chunk)
            values = [v for k in chunk for v in (k.model, k.prompt_sha, k.params_sha)]
            for row in self.con.execute(f"select {_COLUMNS} from calls where {where}", values):
                call = _row(row)
                found[call.key] = call
        return found

    def link(self, key: CallKey, subjects: Iterable[str]) -> None:
        """Record that these subjects' data went into the call's prompt."""
        rows = [(s, key.model, key.prompt_sha, key.params_sha) for s in subjects]
        if rows:
            with self._transaction():
                self._link(rows)

    def _link(self, rows: list[tuple[str, str, str, str]]) -> None:
        self.con.executemany("insert or ignore into call_subjects values (?, ?, ?, ?)", rows)

    def record_ok(
        self, key: CallKey, output: str, subjects: Iterable[str], requests: int, spend: Spend,
        run_id: str, run_spend: Spend,
    ) -> None:  # fmt: skip
        """Commit a successful call (replacing any earlier failure) and the run's spend."""
        with self._transaction():
            self.con.execute(
                """insert or replace into calls
                values (?, ?, ?, 'ok', ?, null, null, 0, ?, ?, ?, ?, ?)""",
                (key.model, key.prompt_sha, key.params_sha, output, requests,
                 spend.prompt_tokens, spend.completion_tokens, spend.cost_usd, time.time()),
            )  # fmt: skip
            self._link([(s, key.model, key.prompt_sha, key.params_sha) for s in subjects])
            self._add_spend(run_id, run_spend)

    def record_failure(
        self, key: CallKey, reason: str, detail: str, subjects: Iterable[str], requests: int,
        spend: Spend, run_id: str, run_spend: Spend,
    ) -> None:  # fmt: skip
        """Commit a failed call: the reason, and one more run it failed in. Never an output."""
        with self._transaction():
            self.con.execute(
                """insert into calls values (?, ?, ?, 'failed', null, ?, ?, 1, ?, ?, ?, ?, ?)
                on conflict (model, prompt_sha, params_sha) do update set
                    status = 'failed', output = null, reason = excluded.reason,
                    detail = excluded.detail, failed_runs = calls.failed_runs + 1,
                    requests = calls.requests + excluded.requests,
                    prompt_tokens = calls.prompt_tokens + excluded.prompt_tokens,
                    completion_tokens = calls.completion_tokens + excluded.completion_tokens,
                    cost_usd = calls.cost_usd + excluded.cost_usd,
                    finished_at = excluded.finished_at""",
                (key.model, key.prompt_sha, key.params_sha, reason, detail, requests,
                 spend.prompt_tokens, spend.completion_tokens, spend.cost_usd, time.time()),
            )  # fmt: skip
            self._link([(s, key.model, key.prompt_sha, key.params_sha) for s in subjects])
            self._add_spend(run_id, run_spend)

    def add_spend(self, run_id: str, spend: Spend) -> None:
        """Add tokens and cost of a call that left no row (it was deferred mid-way)."""
        with self._transaction():
            self._add_spend(run_id, spend)

    def _add_spend(self, run_id: str, spend: Spend) -> None:
        if not spend.tokens and not spend.cost_usd:
            return
        self.con.execute(
            """insert into run_spend values (?, ?, ?, ?) on conflict (run_id) do update set
                prompt_tokens = run_spend.prompt_tokens + excluded.prompt_tokens,
                completion_tokens = run_spend.completion_tokens + excluded.completion_tokens,
                cost_usd = run_spend.cost_usd + excluded.cost_usd""",
            (run_id, spend.prompt_tokens, spend.completion_tokens, spend.cost_usd),
        )

    def run_spend(self, run_id: str) -> Spend:
        """What a run (all its assets and partitions) has spent so far."""
        found = self.con.execute(
            "select prompt_tokens, completion_tokens, cost_usd from run_spend where run_id = ?",
            (run_id,),
        ).fetchone()
        return Spend(*found) if found else Spend()

    def _transaction(self) -> Transaction:
        return Transaction(self.con)


class Transaction:
    """`begin immediate` ... `commit`: the write lock is taken up front, so a busy database is
    waited for (busy_timeout) rather than failing half-way."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("begin immediate")

    def __exit__(self, kind: type[BaseException] | None, *_rest: object) -> None:
        self.con.execute("commit" if kind is None else "rollback")


CacheLocation = Path | str
"""Where the cache is: a SQLite file (the default), or a PostgreSQL URL every worker shares."""


def open_cache(location: CacheLocation) -> CallCache:
    """The cache at `location`: SQLite for a path, PostgreSQL (cache_postgres.py) for a URL."""
    from bigaction_assets.llm.cache_postgres import PostgresCallCache, is_postgres_url

    if is_postgres_url(location):
        return PostgresCallCache(str(location))  # type: ignore[return-value]  # same interface
    return CallCache(Path(location))


def _chunks(items: list[CallKey], size: int) -> Iterator[list[CallKey]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
