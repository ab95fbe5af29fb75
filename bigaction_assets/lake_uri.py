"""Where the lake lives (`BIGACTION_LAKE_URI` names it), and a LakeRoot from a local path or an
`s3://` URI."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pyarrow.fs as pafs

from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.s3_settings import S3Settings

LAKE_URI_ENV = "BIGACTION_LAKE_URI"


def parse_lake(uri: str | Path) -> LakeRoot:
    """A lake root from a path or a URI; an unknown scheme is refused by name."""
    text = str(uri)
    parsed = urlparse(text)
    if isinstance(uri, Path) or parsed.scheme in ("", "file") or len(parsed.scheme) == 1:
        path = Path(parsed.path if parsed.scheme == "file" else text).resolve()
        return LakeRoot(uri=text, filesystem=pafs.LocalFileSystem(), base=path.as_posix())
    if parsed.scheme != "s3":
        raise ValueError(
            f"lake URI {text!r}: the lake lives on a local path or at s3://bucket/prefix"
        )
    if not parsed.netloc:
        raise ValueError(f"lake URI {text!r} names no bucket (s3://bucket/prefix)")
    settings = S3Settings.from_env()
    base = "/".join(p for p in (parsed.netloc, parsed.path.strip("/")) if p)
    return LakeRoot(uri=text, filesystem=settings.pyarrow(), base=base, s3=settings)
