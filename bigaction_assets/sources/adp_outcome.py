"""Whether an ADP trajectory's source records its task as completed, and where it says so."""

from __future__ import annotations

from typing import Any

# Datasets whose every trajectory is a successful run, as their publishers describe them; ADP
# names them by dataset, so a landing dataset of that name is taken to be that dataset.
SUCCESSFUL_RUNS: dict[str, str] = {
    "webarena_successful": "ADP's card for it: 'Successful trajectories from different models'",
}
# Fields of a trajectory's `details` that record the outcome of its run, as ADP's converters
# write them (SWE-Gym's `resolved`: the run's patch passed the task's tests), as a bool or
# Python's spelling of one.
OUTCOME_FIELDS = ("resolved",)
_SPELLINGS = {True: True, False: False, "True": True, "False": False, "true": True, "false": False}


def recorded_completion(details: dict[str, Any], source: str) -> bool | None:
    """True or False where the trajectory (or its whole dataset) records the outcome, else None.

    A run's own claim, such as the `<finish>` an agent writes or `task_completed` in its finish
    call, is not a record of the outcome: only a check the dataset made, or the dataset's
    definition as successful runs, is.
    """
    for field in OUTCOME_FIELDS:
        value = details.get(field)
        if isinstance(value, bool | str) and value in _SPELLINGS:
            return _SPELLINGS[value]
    if source in SUCCESSFUL_RUNS:
        return True
    return None
