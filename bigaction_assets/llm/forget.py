"""Erasing forgotten people's data from the LLM call cache.

A call's prompt holds data of the subjects (episode ids) it was built from. Forgetting a subject
drops its links and every call that no remaining subject shares; `secure_delete` overwrites the
freed pages and the WAL is checkpointed and emptied, so the text does not linger on disk.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bigaction_assets.llm import cache_postgres
from bigaction_assets.llm.cache import CacheLocation, Transaction, connect
from bigaction_assets.llm.cache_postgres import is_postgres_url


def erase_subjects(path: CacheLocation, subjects: Iterable[str]) -> int:
    """Forget these subjects: drop their links, then every call no other subject shares, with
    its content overwritten on disk (`secure_delete`) and the WAL emptied. Calls erased."""
    wanted = sorted(set(subjects))
    if wanted and is_postgres_url(path):
        return cache_postgres.erase_subjects(str(path), wanted)
    path = Path(path)
    if not wanted or not path.exists():
        return 0
    con = connect(path)
    try:
        con.execute("pragma secure_delete = on")
        with Transaction(con):
            con.execute("create temp table forgotten (subject text primary key)")
            con.executemany("insert into forgotten values (?)", [(s,) for s in wanted])
            con.execute(
                """create temp table orphaned as
                select distinct model, prompt_sha, params_sha from call_subjects
                where subject in (select subject from forgotten)"""
            )
            con.execute(
                "delete from call_subjects where subject in (select subject from forgotten)"
            )
            erased = con.execute(
                """delete from calls where (model, prompt_sha, params_sha) in (
                    select model, prompt_sha, params_sha from orphaned o where not exists (
                        select 1 from call_subjects s where s.model = o.model
                        and s.prompt_sha = o.prompt_sha and s.params_sha = o.params_sha))"""
            ).rowcount
            con.execute("drop table forgotten")
            con.execute("drop table orphaned")
        con.execute("pragma wal_checkpoint(truncate)")
        return erased
    finally:
        con.close()


def subjects_present(path: CacheLocation, subjects: Iterable[str]) -> int:
    """Calls still linked to any of these subjects (0 once they are erased)."""
    wanted = sorted(set(subjects))
    if wanted and is_postgres_url(path):
        return cache_postgres.subjects_present(str(path), wanted)
    path = Path(path)
    if not wanted or not path.exists():
        return 0
    con = connect(path)
    try:
        marks = ", ".join("?" for _ in wanted)
        query = f"select count(*) from call_subjects where subject in ({marks})"
        return con.execute(query, wanted).fetchone()[0]
    finally:
        con.close()
