"""The code location: everything under defs/, with resources bound for this environment."""

from pathlib import Path

import dagster as dg

from bigaction_assets.defs.executors import location_executor
from bigaction_assets.defs.resources import local_resources


@dg.definitions
def defs() -> dg.Definitions:
    loaded = dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
    # one process per run unless a job says otherwise (defs/jobs.py says why); Celery workers
    # in the cluster profile (defs/executors.py)
    local = dg.Definitions(resources=local_resources(), executor=location_executor())
    return dg.Definitions.merge(loaded, local)
