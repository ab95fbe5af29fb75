"""Which lake a local cluster keeps (`BIGACTION_CLUSTER_LAKE`), and how its processes reach it."""

from __future__ import annotations

import os
from collections.abc import Mapping

from bigaction_assets.lake_uri import LAKE_URI_ENV
from bigaction_assets.s3_settings import ENDPOINT_ENV, REGION_ENV

CLUSTER_LAKE_ENV = "BIGACTION_CLUSTER_LAKE"
LOCAL = "local"
S3 = "s3"
LAKE_MODES = (LOCAL, S3)
DEFAULT_LAKE = S3
"""The lake and what is published beside it in the cluster's own S3 server; `local` leaves the
lake to `BIGACTION_LAKE_URI` (a store of one's own, as the cluster benchmark's), else a folder."""

BUCKET = "bigaction"
LAKE_PREFIX = "lake"
REGION = "us-east-1"
# moto's server accepts any credentials; these are set so no client goes looking for real ones
ACCESS_KEY = "bigaction"
SECRET_KEY = "bigaction-local"
LOCAL_SERVER_CLIENT_ENV = {"AWS_REQUEST_CHECKSUM_CALCULATION": "when_required"}
"""For clients of a local S3 server: send uploads plain, as AWS SDKs did before 2025, not as
`aws-chunked` bodies with a trailing CRC, which moto's server decodes in Python (2.4x its CPU per
uploaded MB, measured). Production stores keep the SDKs' default."""


class UnknownLakeMode(ValueError):
    """`BIGACTION_CLUSTER_LAKE` names no lake a local cluster can keep."""


def lake_mode(env: Mapping[str, str] | None = None) -> str:
    """The lake the cluster is asked for: `s3` (its own S3 server) or `local` (no server of its
    own: the lake `BIGACTION_LAKE_URI` names, else a folder in the cluster's data folder)."""
    value = (os.environ if env is None else env).get(CLUSTER_LAKE_ENV) or DEFAULT_LAKE
    if value not in LAKE_MODES:
        raise UnknownLakeMode(
            f"{CLUSTER_LAKE_ENV}={value!r}: a local cluster keeps its lake in "
            f"{' or '.join(LAKE_MODES)}"
        )
    return value


def endpoint(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def lake_uri() -> str:
    return f"s3://{BUCKET}/{LAKE_PREFIX}"


def store_env(port: int) -> dict[str, str]:
    """What points a process's lake (and the SFT files, release, benchmark and reward files
    beside it) at the cluster's S3 server: the variables `s3_settings.S3Settings.from_env` reads."""
    return {
        LAKE_URI_ENV: lake_uri(),
        ENDPOINT_ENV: endpoint(port),
        REGION_ENV: REGION,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        **LOCAL_SERVER_CLIENT_ENV,
    }
