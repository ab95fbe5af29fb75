"""Where a run's steps execute, chosen by the environment: this process (the default), Celery
workers or Kubernetes pods.

`BIGACTION_EXECUTOR=celery` is the cluster profile (docs/deploy.md): every step of every job
becomes a Celery task on the broker `BIGACTION_CELERY_BROKER`, run by whichever worker takes it.
`BIGACTION_EXECUTOR=k8s` makes every step a Kubernetes Job (dagster-k8s, installed in the image).
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
    K8S,
    LOCAL,
)


def selected() -> str:
    """The executor the environment asks for; an unknown name is refused, not guessed at."""
    name = (os.environ.get(EXECUTOR_ENV) or LOCAL).strip()
    if name not in (LOCAL, CELERY, K8S):
        raise ValueError(
            f"{EXECUTOR_ENV} must be {LOCAL!r} (the default), {CELERY!r} or {K8S!r}: {name!r}"
        )
    return name


def distributed() -> bool:
    """Whether steps leave the run's process (Celery tasks, Kubernetes Jobs)."""
    return selected() != LOCAL


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


def k8s_executor() -> dg.ExecutorDefinition:
    """dagster-k8s's executor: a Kubernetes Job per step, configured like the run launcher."""
    try:
        from dagster_k8s import k8s_job_executor
    except ImportError as exc:  # not in this project's lock: the Kubernetes image adds it
        raise ImportError(
            f"{EXECUTOR_ENV}=k8s needs dagster-k8s in the image (pip install "
            "dagster-k8s==0.29.27, the release that matches dagster 1.13.27; docs/deploy.md)"
        ) from exc
    return k8s_job_executor


def _distributed_executor() -> dg.ExecutorDefinition:
    return celery_executor() if selected() == CELERY else k8s_executor()


def location_executor() -> dg.ExecutorDefinition:
    """The code location's default: one process per run here, Celery or Kubernetes in a
    cluster."""
    return _distributed_executor() if distributed() else dg.in_process_executor


def dataset_executor() -> dg.ExecutorDefinition:
    """The per-dataset jobs': one process or one per step, chosen per run here (run config);
    in a cluster every step leaves the run's process anyway."""
    return _distributed_executor() if distributed() else dg.multi_or_in_process_executor
