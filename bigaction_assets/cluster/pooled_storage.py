"""The cluster's Dagster storage: dagster-postgres's, holding its connections open in every
process.

Outside the webserver dagster-postgres connects anew for every query (SQLAlchemy's NullPool), and
PostgreSQL forks a backend for each connection: ~10 ms of its CPU, more than most queries cost.
The daemon's loops, each run's process and each client asking about runs connect several times
a second; in the cluster benchmark (benchmarks/README.md#clusterpy) that was ~35-50 CPU s of
PostgreSQL for 8 shards, as much as a worker's own work, on the cores the workers need. Here each
process keeps one connection per storage (Dagster's own pooling, as the webserver's), checked
with a `SELECT 1` before each use so that a PostgreSQL restart costs a reconnect, not an error.
"""

from __future__ import annotations

from typing import Any

from dagster._serdes import ConfigurableClassData
from dagster_postgres.storage import DagsterPostgresStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config
from sqlalchemy import event, exc, pool

POOL_RECYCLE_SECONDS = 600
"""A pooled connection is replaced after this long, whatever the pings say."""
POOL_OVERFLOW = 4
"""Connections beyond the held one, for the odd thread that queries at the same moment (the
daemon's loops, a step's event from another thread); each is closed after its use."""


def _ping(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Before a pooled connection is used: a dead one (PostgreSQL restarted) is dropped and the
    pool connects again, rather than the caller failing on it (SQLAlchemy's checkout recipe)."""
    try:
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("SELECT 1")
        finally:
            cursor.close()
    except Exception as error:
        raise exc.DisconnectionError(f"pooled connection is gone: {error}") from error


def pool_connections(storage: Any) -> None:
    """Makes a Dagster storage (or instance) hold its PostgreSQL connections open: Dagster's
    webserver setting, without a statement timeout (unpooled connections have none either)."""
    storage.optimize_for_webserver(
        statement_timeout=0, pool_recycle=POOL_RECYCLE_SECONDS, max_overflow=POOL_OVERFLOW
    )


class PooledPostgresStorage(DagsterPostgresStorage):
    """`storage: postgres` of dagster.yaml, its run, event and schedule storages pooled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for storage in (self._run_storage, self._event_log_storage, self._schedule_storage):
            pool_connections(storage)

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> PooledPostgresStorage:
        return cls(
            inst_data=inst_data,
            postgres_url=pg_url_from_config(config_value),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            token_provider=get_token_provider_from_config(config_value),
        )


event.listen(pool.QueuePool, "checkout", _ping)
