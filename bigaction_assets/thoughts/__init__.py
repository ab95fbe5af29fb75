"""Generated thoughts: the reasoning before each agent action that a dataset did not record."""
