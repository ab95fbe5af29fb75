"""A local S3-protocol server for tests: moto's server mode on 127.0.0.1, one bucket in it."""

from __future__ import annotations

import logging
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
import pytest
from moto.server import ThreadedMotoServer

from bigaction_assets.s3_settings import ENDPOINT_ENV, REGION_ENV

# moto accepts any credentials; they are set so no client looks for real ones
TEST_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Starts the server, points the AWS variables at it, creates a bucket; yields its name."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for name, value in {**TEST_CREDENTIALS, ENDPOINT_ENV: endpoint}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(REGION_ENV, "us-east-1")
        bucket = f"lake-{uuid.uuid4().hex[:8]}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(
            Bucket=bucket
        )
        yield bucket
    finally:
        server.stop()
