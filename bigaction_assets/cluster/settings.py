"""The cluster profile's switches: the environment variables that select it and its Celery
settings, shared by the code location (defs/executors.py) and the services that run it."""

from __future__ import annotations

from typing import Any

EXECUTOR_ENV = "BIGACTION_EXECUTOR"
CELERY = "celery"
K8S = "k8s"
LOCAL = "in_process"
BROKER_ENV = "BIGACTION_CELERY_BROKER"
BACKEND_ENV = "BIGACTION_CELERY_BACKEND"

# Read by the executor in each run and by every worker (`make cluster` writes them into the
# workers' config): a task is acknowledged as its step starts, so no step ever runs twice; a
# worker takes a task only when it has a free process (nothing waits on a worker that dies);
# a started task records its worker, which the run watches (cluster/executor.py). A broker that
# is away for a moment (a restart) is waited for, by the runs and the workers alike: sending a
# task, reading and storing a step's result are retried with backoff for about two minutes.
CELERY_SETTINGS: dict[str, Any] = {
    "task_acks_late": False,
    "worker_disable_prefetch": True,
    "worker_prefetch_multiplier": 1,
    "task_track_started": True,
    "broker_connection_retry_on_startup": True,
    "result_backend_always_retry": True,
    "result_backend_max_retries": 30,
    "task_publish_retry_policy": {
        "max_retries": 30,
        "interval_start": 0.5,
        "interval_step": 1.0,
        "interval_max": 5.0,
    },
}
