"""The LLM call cache on PostgreSQL: one cache that every worker of a cluster shares.

The same tables and the same statements (cache_sql.py) as the SQLite cache (cache.py), which
stays the local default. Workers on many machines write at once here, which is where the
statements' rule that the first finished output wins matters most: another worker's failure or
second output of the same call never replaces it, so every row built from the call reads one
answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg2

from bigaction_assets.llm.cache_sql import SqlCallCache, schema

SCHEMA = schema(table_options="")
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


class PostgresCallCache(SqlCallCache):
    """The shared cache through one connection per run."""

    PARAMETER = "%s"

    def __init__(self, url: str) -> None:
        self.path = url
        self.con = connect(url)

    def _fetch(self, sql: str, values: Iterable[Any]) -> list[tuple]:
        with self.con, self.con.cursor() as cursor:
            cursor.execute(sql, tuple(values))
            return cursor.fetchall()

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        with self.con, self.con.cursor() as cursor:  # commits on leaving, rolls back on an error
            yield cursor


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
