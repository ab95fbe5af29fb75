"""What runs by itself under `make ui`: everything downstream of a dataset's run, but the push.

The landing sensor runs a new dataset through its partitioned stages; this sensor takes it on
from there: the dataset's benchmark partition, then the SFT files, the leaderboard and the local
release folder. `hub_revision` (the push to the Hub) has no condition: it runs only when launched.
"""

import dagster as dg

# A run stops counting an asset as in progress once it has written it, while that asset's
# blocking checks still run; the release refuses inputs whose checks were never evaluated, so
# nothing downstream starts before those checks are done (with a process per step the gap is
# long enough to hit).
_CHECKS_RUNNING = dg.AutomationCondition.any_deps_match(
    dg.AutomationCondition.any_checks_match(
        dg.AutomationCondition.in_progress(), blocking_only=True
    )
).with_label("any_deps_blocking_checks_running")

# A cross-dataset output, rebuilt once after its inputs changed and no run is still writing or
# checking them. Unlike `eager()` it does not wait for every partition of its inputs to exist: a
# telemetry day registered today and built tonight, or a dataset whose run failed, must not hold
# back everyone else's SFT files. Its own first build is left to `make demo` or a person: an
# empty lake has no release to build.
AFTER_INPUTS_CHANGE = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~_CHECKS_RUNNING
    & ~dg.AutomationCondition.in_progress()
).with_label("after_inputs_change")

# A dataset's benchmark partition: built when its spine partition (the same key) is.
WITH_ITS_DATASET = (dg.AutomationCondition.eager() & ~_CHECKS_RUNNING).with_label(
    "with_its_dataset"
)

automation_sensor = dg.AutomationConditionSensorDefinition(
    "automation_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    # the daemon looks every 5 s and skips a sensor ticked less than this ago: 1 means each look
    minimum_interval_seconds=1,
    description="Builds what a finished run made out of date: benchmark partitions, SFT files, "
    "the leaderboard and the local release folder. Never pushes to the Hub.",
)
