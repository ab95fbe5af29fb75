"""Where and as whom to reach an S3-protocol store: one set of settings for pyarrow and s3fs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

import pyarrow.fs as pafs

ENDPOINT_ENV = "AWS_ENDPOINT_URL"
"""The S3 endpoint (`http://127.0.0.1:9000` for a local server); unset means AWS itself."""
REGION_ENV = "AWS_REGION"
DEFAULT_REGION = "us-east-1"


_FSSPEC_BY_STORE: dict[tuple[int, S3Settings], Any] = {}


@dataclass(frozen=True)
class S3Settings:
    """Where and as whom to reach an S3-protocol store, read once from the standard AWS
    variables and handed to both pyarrow (writes, reads) and s3fs (DuckDB's reads), so the two
    libraries can never disagree about which store they talk to."""

    endpoint: str | None
    region: str
    access_key: str | None
    secret_key: str | None

    @classmethod
    def from_env(cls) -> S3Settings:
        return cls(
            endpoint=os.environ.get(ENDPOINT_ENV) or None,
            region=os.environ.get(REGION_ENV) or os.environ.get("AWS_DEFAULT_REGION") or "",
            access_key=os.environ.get("AWS_ACCESS_KEY_ID") or None,
            secret_key=os.environ.get("AWS_SECRET_ACCESS_KEY") or None,
        )

    def pyarrow(self) -> pafs.S3FileSystem:
        options: dict[str, Any] = {"region": self.region or DEFAULT_REGION}
        if self.endpoint:
            parsed = urlparse(self.endpoint)
            options |= {"endpoint_override": parsed.netloc, "scheme": parsed.scheme or "https"}
        if self.access_key and self.secret_key:
            options |= {"access_key": self.access_key, "secret_key": self.secret_key}
        return pafs.S3FileSystem(**options)

    def fsspec(self) -> Any:
        """An s3fs filesystem on the same store, for `DuckDBPyConnection.register_filesystem`
        (each object looked up once per read: `s3_lookups`).

        One per process and store, its caches emptied at each call: a new one built its own
        botocore client, parsing botocore's service models and an SSL context each time (~0.25
        s of CPU per DuckDB connection, measured: a worker spent 15-20% of its CPU there)."""
        from bigaction_assets.s3_lookups import S3LookingOnce  # s3fs: the cluster extra

        key = (os.getpid(), self)
        filesystem = _FSSPEC_BY_STORE.get(key)
        if filesystem is None:
            client: dict[str, Any] = {"region_name": self.region or DEFAULT_REGION}
            if self.endpoint:
                client["endpoint_url"] = self.endpoint
            filesystem = S3LookingOnce(
                key=self.access_key,
                secret=self.secret_key,
                client_kwargs=client,
                skip_instance_cache=True,
            )
            _FSSPEC_BY_STORE[key] = filesystem
        filesystem.invalidate_cache()  # listings and looks start afresh for each new user
        return filesystem
