"""Privacy core: personal-data detectors, scrubbing, pseudonyms, telemetry levels, forgetting."""
