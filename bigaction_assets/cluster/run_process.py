"""What each run's process starts from (launcher.py): imported once by the forkserver, so a forked
run finds Dagster, the cluster's executor and storage, and every module of the code location
already imported; then the body `dagster api execute_run` runs for a run.

Importing the code location is not loading it: each run still builds its definitions (what the
run's job and resources are comes from the environment the run starts in, and is never shared
between runs), only from modules already in memory.
"""

from __future__ import annotations

from dagster import DagsterInstance
from dagster._cli.api import _execute_run_command_body
from dagster._core.instance.ref import InstanceRef
from dagster._serdes import deserialize_value
from dagster._utils.interrupts import capture_interrupts, setup_interrupt_handlers

# what every run uses beside the code location: the Celery executor (celery, kombu, redis) and
# the instance's storage (dagster-postgres, SQLAlchemy)
import bigaction_assets.cluster.executor
import bigaction_assets.cluster.pooled_storage  # noqa: F401
from bigaction_assets.definitions import defs


def execute_run(run_id: str, instance_ref: str) -> None:
    """Runs `run_id` in this process, as `dagster api execute_run` does (its events, its
    failure, its interrupts: SIGTERM stops the run as SIGINT does)."""
    setup_interrupt_handlers()
    with (
        capture_interrupts(),
        DagsterInstance.from_ref(deserialize_value(instance_ref, InstanceRef)) as instance,
    ):
        _execute_run_command_body(
            run_id, instance, lambda _event: None, set_exit_code_on_failure=False
        )


def _import_the_code_location() -> None:
    """Every module under defs/ (the definitions import them as they load)."""
    defs()


_import_the_code_location()
