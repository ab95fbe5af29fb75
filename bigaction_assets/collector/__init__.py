"""The telemetry collector service (Starlette app served by uvicorn)."""
