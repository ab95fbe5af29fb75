"""Where a run's steps execute, chosen by the environment: this process (the default) or Celery.

`BIGACTION_EXECUTOR=celery` is the cluster profile (docs/deploy.md): every step of every job
becomes a Celery task on the broker `BIGACTION_CELERY_BROKER`, run by whichever worker takes it.
Nothing else changes: the same jobs and assets, the same run config.
"""

from __future__ import annotations

import os

import dagster as dg

from bigaction_assets.cluster.settings import (
    BACKEND_ENV,
    BROKER_ENV,
    CELERY,
    CELERY_SETTINGS,
    EXECUTOR_ENV,
    LOCAL,
)


def selected() -> str:
    """The executor the environment asks for; an unknown name is refused, not guessed at."""
    name = (os.environ.get(EXECUTOR_ENV) or LOCAL).strip()
    if name not in (LOCAL, CELERY):
        raise ValueError(f"{EXECUTOR_ENV} must be {LOCAL!r} (the default) or {CELERY!r}: {name!r}")
    return name


def on_celery() -> bool:
    return selected() == CELERY


def celery_executor() -> dg.ExecutorDefinition:
    """Dagster's Celery executor (watching each step's worker) on the broker and result
    backend from the environment."""
    try:
        from bigaction_assets.cluster.executor import watched_celery_executor
    except ImportError as exc:  # the `cluster` extra is not installed
        raise ImportError(
            f"{EXECUTOR_ENV}=celery needs dagster-celery: install the `cluster` extra "
            "(uv sync --extra cluster)"
        ) from exc
    if not os.environ.get(BROKER_ENV):
        raise ValueError(f"{EXECUTOR_ENV}=celery needs {BROKER_ENV} (e.g. redis://host:6379/0)")
    backend = BACKEND_ENV if os.environ.get(BACKEND_ENV) else BROKER_ENV
    return watched_celery_executor.configured(
        {
            "broker": {"env": BROKER_ENV},
            "backend": {"env": backend},
            "config_source": CELERY_SETTINGS,
        },
        name=CELERY,
    )


def location_executor() -> dg.ExecutorDefinition:
    """The code location's default: one process per run here, Celery in the cluster."""
    return celery_executor() if on_celery() else dg.in_process_executor


def dataset_executor() -> dg.ExecutorDefinition:
    """The per-dataset jobs': one process or one per step, chosen per run here (run config);
    Celery in the cluster, where every step is a task anyway."""
    return celery_executor() if on_celery() else dg.multi_or_in_process_executor
