"""New labels in the annotation app reach the lake and the reward sets within a minute."""

import dagster as dg

from bigaction_assets.defs.jobs import annotations_job
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.defs.reward.resources import open_store


@dg.sensor(
    job=annotations_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def new_labels_sensor(
    context: dg.SensorEvaluationContext, lake: LakeResource
) -> dg.RunRequest | dg.SkipReason:
    """Runs `collect_annotations` once for each new store revision (a label saved or changed)."""
    if not lake.annotation_store.is_file():
        return dg.SkipReason(f"no annotation store at {lake.annotation_store} yet")
    revision = open_store(lake).latest_revision()
    if revision == 0:
        return dg.SkipReason("no labels yet")
    if context.cursor == str(revision):
        return dg.SkipReason(f"no new labels since revision {revision}")
    context.update_cursor(str(revision))
    return dg.RunRequest(run_key=f"labels-{revision}")
