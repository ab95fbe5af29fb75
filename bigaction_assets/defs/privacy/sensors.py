"""A new forget request starts the erasure within a minute."""

import hashlib

import dagster as dg

from bigaction_assets.defs.privacy.checks import FORGET_CHECKS
from bigaction_assets.defs.resources import LakeResource
from bigaction_assets.privacy import forget

forget_users_job = dg.define_asset_job(
    "forget_users",
    # `annotations` erases the senders' items and labels from the annotation app's store too
    selection=dg.AssetSelection.assets("forgotten_users", "annotations")
    | dg.AssetSelection.checks(*FORGET_CHECKS),
    description="Erases senders who asked to be forgotten, then proves no table holds them.",
)


@dg.sensor(
    job=forget_users_job,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def forget_requests_sensor(
    context: dg.SensorEvaluationContext, lake: LakeResource
) -> dg.RunRequest | dg.SkipReason:
    """Runs the erasure once for every new set of forget requests."""
    requests = sorted(forget.requests(lake.landing))
    if not requests:
        return dg.SkipReason("no forget requests")
    digest = hashlib.sha256("\n".join(requests).encode()).hexdigest()[:16]
    if digest == context.cursor:
        return dg.SkipReason("every forget request has been applied")
    context.update_cursor(digest)
    return dg.RunRequest(run_key=f"forget-{digest}")
