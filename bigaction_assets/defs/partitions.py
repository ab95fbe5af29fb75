"""Landing datasets are the partitions of the spine; a sensor registers them as they arrive."""

import dagster as dg

# Every landing dataset, and each day of telemetry (`telemetry.<day>`), through the spine.
datasets_partitions = dg.DynamicPartitionsDefinition(name="datasets")

# The benchmark's: every landing dataset, but no telemetry day (no web task to draw steps from),
# so the UI does not show telemetry days as benchmark partitions missing forever. A benchmark
# partition reads the spine partition of the same key.
benchmark_datasets = dg.DynamicPartitionsDefinition(name="benchmark_datasets")
SAME_DATASET = dg.IdentityPartitionMapping()

# Telemetry (#6): each batch the collector lands is one partition of `raw_telemetry`.
telemetry_batches = dg.DynamicPartitionsDefinition(name="telemetry_batches")
