"""The web benchmark: snapshots of steps with sampled candidates, prompts, answers and metrics."""
