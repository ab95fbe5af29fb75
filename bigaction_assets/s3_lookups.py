"""s3fs for DuckDB: an object looked up once per read, not once per question about it.

DuckDB's fsspec bridge asks about an object it opens about seven times (its size, its time, the
opening itself); s3fs answers each with a HEAD unless a listing of its folder is cached, which
only a glob over the folder gives. A check that reads one partition by name made ~8 requests
where 2 do. This keeps each answer for a moment (LOOK_SECONDS), long enough for the questions
of one open, short enough that an object replaced between two queries is seen anew. Imported
only for an object-store lake (s3fs is in the cluster extra).
"""

from __future__ import annotations

import time
from typing import Any

import s3fs

LOOK_SECONDS = 2.0


class S3LookingOnce(s3fs.S3FileSystem):  # type: ignore[misc]  # s3fs has no type hints
    """`s3fs.S3FileSystem` whose `info` of a path is reused for LOOK_SECONDS."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._looks: dict[tuple[str, str | None], tuple[float, dict[str, Any]]] = {}

    async def _info(
        self,
        path: str,
        bucket: str | None = None,
        key: str | None = None,
        refresh: bool = False,
        version_id: str | None = None,
    ) -> dict[str, Any]:
        asked = (self._strip_protocol(path), version_id)  # `s3://b/k` and `b/k` alike
        now = time.monotonic()
        seen = self._looks.get(asked)
        if not refresh and seen is not None and now - seen[0] < LOOK_SECONDS:
            return seen[1]
        info = await super()._info(path, bucket, key, refresh=refresh, version_id=version_id)
        self._looks[asked] = (now, info)
        return info

    def invalidate_cache(self, path: str | None = None) -> None:
        self._looks.clear()
        super().invalidate_cache(path)
