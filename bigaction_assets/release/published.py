"""The release folder beside an object-store lake (`s3://bucket/prefix/release/` for a lake at
`s3://bucket/prefix/lake`), as `data/release/` is beside `data/lake/`: built in a local folder,
published file by file with the manifest last, read back whole for the checks and the push."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from bigaction_assets.lakefs import CHUNK, LakeRoot
from bigaction_assets.release.build import (
    MANIFEST,
    ReleaseSettings,
    ReleaseSummary,
    build_release,
)

FOLDER = "release"


def release_root(lake: LakeRoot) -> LakeRoot:
    return lake.beside(FOLDER)


def publish_release(
    lake: LakeRoot, landing: Path, datasets: list[str], settings: ReleaseSettings
) -> tuple[ReleaseSummary, str]:
    """`build_release` of the object-store `lake`, published beside it. Each file appears
    whole; unchanged ones are not uploaded; the manifest goes last, so a manifest on the store
    names files that are there (a reader meeting a shard rewritten under the same name before
    the new manifest sees it differ from the old one: the push refuses, the checks fail).
    Returns the summary and the release's URI."""
    root = release_root(lake)
    with tempfile.TemporaryDirectory(prefix="bigaction-release-") as folder:
        release = build_release(lake, landing, Path(folder) / FOLDER, datasets, settings)
        root.publish_folder(release.folder, last=(MANIFEST,))
    return release, root.uri


def _relative(root: LakeRoot, key: str) -> str:
    return key.removeprefix(root.base + "/")


def read_manifest(root: LakeRoot) -> dict[str, Any] | None:
    """The published release's manifest; None when none is published."""
    key = root.key(MANIFEST)
    return json.loads(root.read_bytes(key)) if root.exists(key) else None


def object_digests(root: LakeRoot) -> dict[str, dict[str, Any]]:
    """`build.file_digests` of the published release: sha256 and size of every object but the
    manifest, by path within the release."""
    digests = {}
    for key in root.list_files():
        relative = _relative(root, key)
        if relative == MANIFEST:
            continue
        digest, size = hashlib.sha256(), 0
        with root.consistent_read(key) as handle:
            while block := handle.read(CHUNK):
                digest.update(block)
                size += len(block)
        digests[relative] = {"sha256": digest.hexdigest(), "bytes": size}
    return digests


def download_release(root: LakeRoot, folder: Path) -> Path:
    """Copy the published release into the local `folder` (what the Hub push uploads); the
    push compares it with its manifest before anything leaves, so a copy taken while a new
    release was being published is refused, never pushed."""
    for key in root.list_files():
        target = folder / _relative(root, key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with root.consistent_read(key) as handle, open(target, "wb") as out:
            while block := handle.read(CHUNK):
                out.write(block)
    return folder
