"""What runs by itself under `make ui`: everything downstream of a dataset's run, but the push.

The landing sensor runs a new dataset through its partitioned stages; this sensor takes it on
from there: the dataset's benchmark partition, then the SFT files, the leaderboard and the local
release folder. `hub_revision` (the push to the Hub) has no condition: it runs only when launched.
"""

import dagster as dg

# A cross-dataset output, rebuilt once after its inputs changed and no run is still writing
# them. Unlike `eager()` it does not wait for every partition of its inputs to exist: a
# telemetry day registered today and built tonight, or a dataset whose run failed, must not hold
# back everyone else's SFT files. Its own first build is left to `make demo` or a person: an
# empty lake has no release to build.
AFTER_INPUTS_CHANGE = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("after_inputs_change")

# A dataset's benchmark partition: built when its spine partition (the same key) is.
WITH_ITS_DATASET = dg.AutomationCondition.eager()

automation_sensor = dg.AutomationConditionSensorDefinition(
    "automation_sensor",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=5,  # the daemon's own floor
    description="Builds what a finished run made out of date: benchmark partitions, SFT files, "
    "the leaderboard and the local release folder. Never pushes to the Hub.",
)
