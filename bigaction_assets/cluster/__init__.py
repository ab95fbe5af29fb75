"""The cluster profile on one machine: PostgreSQL, Redis, Dagster's services and Celery workers."""
