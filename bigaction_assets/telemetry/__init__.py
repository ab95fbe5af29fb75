"""Telemetry intake: checking batches, keeping what the sender allowed, landing them durably,
and turning a run's steps into a standardized episode."""
