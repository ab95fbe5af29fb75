"""Telemetry stage: landed batches into `raw_telemetry` (each once) and the daily report."""
