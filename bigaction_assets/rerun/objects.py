"""Stamps of outputs on an object-store lake: each object known by its size and the store's
content tag (S3's ETag), listed a folder at a time.

The ETag is the store's own digest of an object's bytes (on S3 the MD5 of an object written
in one piece; a multipart upload's is a digest of its parts' digests): any edit changes it,
even one that keeps the size within the same second (S3's times have one-second resolution),
while rewriting only the object's metadata ("touching" it: a copy onto itself) leaves it, as a
content fingerprint should. It costs no read: one listing per lake table and output folder,
where hashing the objects would read the whole lake.
"""

from __future__ import annotations

from typing import Any

from bigaction_assets.lakefs import LakeRoot

# Outputs beyond the lake's `<group>/<asset>/<partition>.parquet`: folders beside the lake.
FOLDERS = {
    "sft_files": "sft",
    "leaderboard": "benchmark",
    "reward_examples": "reward/llama_factory",
    "hub_release": "release",
}


class ObjectStates:
    """(size, ETag) of the objects of an object-store lake and the folders beside it, by their
    path relative to the folder holding the lake (`lake/<group>/...`, `sft/...`): the names a
    local lake's stamps give its files relative to the data folder."""

    def __init__(self, lake: LakeRoot) -> None:
        if lake.s3 is None:
            raise ValueError(f"{lake.uri} is a local lake: its files have stat keys")
        self.uri = lake.uri
        self.parent, _, self.lake_name = lake.base.rpartition("/")
        self._fs: Any = lake.s3.fsspec()
        self._listed: dict[str, dict[str, list[Any]]] = {}

    def _folder(self, relative: str) -> str:
        """What is listed at once for `relative`: its lake table, or its output folder."""
        parts = relative.split("/")
        return "/".join(parts[:3]) if parts[0] == self.lake_name else parts[0]

    def _listing(self, folder: str) -> dict[str, list[Any]]:
        if folder not in self._listed:
            self._fs.invalidate_cache()
            found = self._fs.find(f"{self.parent}/{folder}", detail=True)
            self._listed[folder] = {
                path.removeprefix(f"{self.parent}/"): [info["size"], info["ETag"].strip('"')]
                for path, info in found.items()
                if info.get("type") == "file" and not path.rsplit("/", 1)[-1].startswith(".")
            }
        return self._listed[folder]

    def state(self, relative: str) -> list[Any] | None:
        """The object's (size, ETag), None when there is no such object."""
        return self._listing(self._folder(relative)).get(relative)

    def outputs(self, group: str, asset: str, partition: str | None) -> dict[str, list[Any]]:
        """The objects an output consists of, as they are now (listed again: a run just wrote
        them)."""
        table = f"{self.lake_name}/{group}/{asset}"
        self._listed.pop(table, None)
        name = f"{table}/{partition or 'all'}.parquet"
        found = {name: state} if (state := self.state(name)) is not None else {}
        if asset in FOLDERS:
            folder = FOLDERS[asset]
            self._listed.pop(self._folder(folder), None)
            listed = self._listing(self._folder(folder))
            found |= {k: v for k, v in listed.items() if k.startswith(f"{folder}/")}
        return found
