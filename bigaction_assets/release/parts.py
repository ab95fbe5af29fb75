"""A release rebuilt only where its inputs changed, one part at a time.

A part is what one builder makes of one dataset: the shards of `data/<config>/<dataset>/` for
the configs it writes, and what it adds to the card's counts. Each part is recorded, in a build
cache beside the release folder (`data/cache/release-parts.json`, not part of the release),
with a key: the sha256 of the package's code, the release's settings, the Parquet writer's
version and the lake files the part is read from. The next build keeps a part whose key is the
same and whose files are there with the digests the release's manifest recorded: it links them
into the new folder and adds the part's recorded counts, instead of reading its lake files and
writing its shards again. So a dataset edited beside a 100,000-episode one rebuilds its own
shards alone, and the release is the same bytes either way.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bigaction_assets.lake import Lake, partition_exists, partition_file
from bigaction_assets.release.tally import Tally
from bigaction_assets.rerun.fingerprint import file_digests

FORMAT = 1  # of the parts file; another is read as no record


def parts_file(release: Path) -> Path:
    """Where the parts of the release in `release` are recorded: the cache folder beside it
    (`data/cache/release-parts.json` for `data/release`)."""
    return release.parent / "cache" / f"{release.name}-parts.json"


class PartTally:
    """The counts of one part: passed on to the release's tally as they come, and summed for
    the manifest in the order they first came (the card lists configs and splits so)."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.adds: dict[tuple[str, str, str], int] = {}
        self.rows: dict[tuple[str, str], int] = {}

    def add(self, config: str, split: str, source: str, rows: int) -> None:
        self.tally.add(config, split, source, rows)
        self.adds[config, split, source] = self.adds.get((config, split, source), 0) + rows

    def add_rows(self, config: str, split: str, rows: int) -> None:
        self.tally.add_rows(config, split, rows)
        self.rows[config, split] = self.rows.get((config, split), 0) + rows


class Parts:
    """The parts of the release in `previous` that a build into `folder` can keep, and the
    record of the parts of that build.

    Args:
        lake: the lake the release is read from (a local folder: an object-store lake's
            release is built in a fresh folder each time, with nothing to keep).
        folder: the folder being built, relative paths as in the release.
        previous: the release it replaces, if any, and `manifest` the name of its manifest.
        settings: what else shapes every part (the shard cap, the pipeline's versions).
        code: a hash of the code that makes the parts (`rerun.graph.source_hash`).
    """

    def __init__(
        self,
        lake: Lake,
        folder: Path,
        previous: Path,
        manifest: str,
        settings: dict[str, Any],
        code: str,
    ) -> None:
        self.lake = lake
        self.folder = folder
        self.previous = previous
        self.base = {"code": code, "settings": settings}
        self.recorded: dict[str, dict[str, Any]] = {}
        """Every part of the build, by name (`<builder>/<dataset>`)."""
        self.kept_files: dict[str, dict[str, Any]] = {}
        self._old_parts: dict[str, dict[str, Any]] = {}
        self._old_files: dict[str, dict[str, Any]] = {}
        if isinstance(lake, Path):
            try:
                old = json.loads(parts_file(previous).read_text())
                release = json.loads((previous / manifest).read_text())
                # the record of that very release (a build stopped between swapping the
                # folder and recording its parts leaves the record of the one before)
                if old["format"] == FORMAT and old["release"] == release["content_sha256"]:
                    self._old_parts, self._old_files = old["parts"], release["files"]
            except (OSError, ValueError, KeyError):  # none, or unreadable: build every part
                self._old_parts, self._old_files = {}, {}

    def key(self, name: str, inputs: Iterable[tuple[str, str, str]]) -> str:
        """The part's key: the code, the settings, and the content of its lake files
        (`(group, asset, dataset)` each; an absent one counts as absent)."""
        files = {
            "/".join(table): partition_file(self.lake, *table)
            for table in inputs
            if partition_exists(self.lake, *table)
        }
        digests = file_digests(path for path in files.values() if isinstance(path, Path))
        # an object's key where its content is not read (no part of such a lake is kept)
        contents = {
            table: digests[path] if isinstance(path, Path) else str(path)
            for table, path in files.items()
        }
        text = json.dumps({**self.base, "part": name, "inputs": contents}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def keep(self, name: str, key: str, tally: Tally) -> dict[str, Any] | None:
        """Keep the part from the release before, if it was made with this key and its files
        are there unchanged: they are linked into the new folder and its counts added to
        `tally`. Returns what else its builder recorded (None: the part must be built)."""
        old = self._old_parts.get(name)
        if not isinstance(self.lake, Path) or old is None or old.get("key") != key:
            return None
        files = {
            path: digest
            for path, digest in self._old_files.items()
            if any(path.startswith(f"{folder}/") for folder in old["folders"])
        }
        if not self._unchanged(files, old["folders"]):
            return None
        for path in files:
            target = self.folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.previous / path, target)
        for config, split, source, rows in old["adds"]:
            tally.add(config, split, source, rows)
        for config, split, rows in old["rows"]:
            tally.add_rows(config, split, rows)
        self.kept_files.update(files)
        self.recorded[name] = old
        return old["extra"]

    def _unchanged(self, files: dict[str, dict[str, Any]], folders: list[str]) -> bool:
        """Whether the old release holds exactly these files in the part's folders, each with
        the size and sha256 its manifest recorded."""
        present = {
            path.relative_to(self.previous).as_posix()
            for folder in folders
            if (self.previous / folder).is_dir()
            for path in (self.previous / folder).rglob("*")
            if path.is_file()
        }
        if present != set(files):
            return False
        paths = {self.previous / path: path for path in files}
        for path, digest in file_digests(paths).items():
            recorded = files[paths[path]]
            if digest != recorded["sha256"] or path.stat().st_size != recorded["bytes"]:
                return False
        return True

    def record(
        self, name: str, key: str, folders: list[str], counts: PartTally, extra: dict[str, Any]
    ) -> None:
        """The part as it was just built, to be kept next time."""
        self.recorded[name] = {
            "key": key,
            "folders": folders,
            "adds": [[*where, rows] for where, rows in counts.adds.items()],
            "rows": [[*where, rows] for where, rows in counts.rows.items()],
            "extra": extra,
        }

    def save(self, release: Path, content_sha256: str) -> None:
        """Record this build's parts beside `release`, where it now is, with the content hash
        of its manifest (written whole, or not at all)."""
        target = parts_file(release)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        record = {"format": FORMAT, "release": content_sha256, "parts": self.recorded}
        tmp.write_text(json.dumps(record, sort_keys=True))
        os.replace(tmp, target)
