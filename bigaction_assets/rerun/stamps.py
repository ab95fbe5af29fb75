"""Stamps: what each built output was made from, kept in one small manifest next to the lake.

A stamp says "these output files, as they are now, were built from inputs with fingerprint F".
It holds while every file it names keeps its stat key (size, mtime, ctime, inode): anything that
rewrites or edits an output (an erasure, a run from the UI with other config, a hand edit)
breaks it, and the output is built again. Outputs are written only by renaming a new file into
place, so an unchanged stat key means unchanged bytes, without reading them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.durable import write_durably
from bigaction_assets.rerun.fingerprint import stat_key
from bigaction_assets.rerun.objects import ObjectStates

STAMPS_FILE = Path("rerun") / "stamps.json"
FORMAT = 1


def _name(asset: str, partition: str | None) -> str:
    return f"{asset}[{partition}]" if partition is not None else asset


@dataclass
class Stamps:
    """The stamps of one data folder (`<data>/rerun/stamps.json`); with `store`, of outputs on
    an object-store lake, each known by its objects' (size, ETag) and the lake's URI."""

    data_dir: Path
    entries: dict[str, dict] = field(default_factory=dict)
    store: ObjectStates | None = None

    @property
    def path(self) -> Path:
        return self.data_dir / STAMPS_FILE

    @classmethod
    def load(cls, data_dir: Path, store: ObjectStates | None = None) -> Stamps:
        try:
            saved = orjson.loads((data_dir / STAMPS_FILE).read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return cls(data_dir, store=store)  # no stamps (or a torn file): all built once
        entries = saved.get("stamps", {}) if saved.get("format") == FORMAT else {}
        return cls(data_dir, entries, store)

    def current(self, asset: str, partition: str | None = None) -> str | None:
        """The fingerprint the output was built from, if its files are still as built."""
        entry = self.entries.get(_name(asset, partition))
        return entry["fingerprint"] if entry and not self.moved(entry) else None

    def why_stale(self, asset: str, partition: str | None, expected: str) -> str | None:
        """Why the output must be built again (None: it is up to date)."""
        entry = self.entries.get(_name(asset, partition))
        if entry is None:
            return "never built here"
        if moved := self.moved(entry):
            return f"{moved} changed since it was built"
        return "its inputs changed" if entry["fingerprint"] != expected else None

    def moved(self, entry: dict) -> str | None:
        """The first output file of the entry that is not as it was built, if any."""
        built_in = entry.get("store")  # none: files under the data folder
        if built_in != (self.store.uri if self.store else None):
            return f"its lake (then {built_in or 'the local one'})"
        if self.store is not None:
            for relative, state in entry["outputs"].items():
                if self.store.state(relative) != state:
                    return relative
            return None
        for relative, key in entry["outputs"].items():
            try:
                if list(stat_key(self.data_dir / relative)) != key:
                    return relative
            except FileNotFoundError:
                return relative
        return None

    def record(
        self,
        asset: str,
        partition: str | None,
        fingerprint: str,
        outputs: list[Path] | Mapping[str, list[Any]],
    ) -> None:
        """Stamp an output just built (its files, or its objects' states from `store`); call it
        only after the run that built it succeeded."""
        if isinstance(outputs, Mapping):
            assert self.store is not None, "objects are stamped with the store they are on"
            stamp = {"fingerprint": fingerprint, "outputs": dict(sorted(outputs.items()))}
            self.entries[_name(asset, partition)] = {**stamp, "store": self.store.uri}
            return
        self.entries[_name(asset, partition)] = {
            "fingerprint": fingerprint,
            "outputs": {
                p.relative_to(self.data_dir).as_posix(): list(stat_key(p))
                for p in sorted(outputs)
                if p.is_file()
            },
        }

    def forget(self, asset: str, partition: str | None = None) -> None:
        self.entries.pop(_name(asset, partition), None)

    def save(self) -> None:
        """Write the manifest (left alone when nothing in it changed)."""
        data = {"format": FORMAT, "stamps": self.entries}
        write_durably(self.path, orjson.dumps(data, option=orjson.OPT_SORT_KEYS))
