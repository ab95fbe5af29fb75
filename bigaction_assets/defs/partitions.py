"""Landing datasets are the partitions of the spine; a sensor registers them as they arrive."""

import dagster as dg

datasets_partitions = dg.DynamicPartitionsDefinition(name="datasets")

# Telemetry (#6): each batch the collector lands is one partition of `raw_telemetry`.
telemetry_batches = dg.DynamicPartitionsDefinition(name="telemetry_batches")
