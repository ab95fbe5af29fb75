"""Gates on the thoughts table."""

from bigaction_assets.defs.gates import blocking_lake_check
from bigaction_assets.thoughts.quality import thoughts_without_their_action

thoughts_match_actions = blocking_lake_check(
    "thoughts",
    "thoughts_match_actions",
    "thoughts whose event is not an agent action without a recorded thought",
    thoughts_without_their_action,
    "Every thought belongs to an agent action that has no recorded thought.",
    per_partition=True,
)
