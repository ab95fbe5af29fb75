"""ADP's own thought cache: the thoughts its generator already paid for, as recorded thoughts.

An ADP dataset can ship `generated_thoughts.json` beside its trajectories: a JSON object
`{trajectory id: {content position: thought}}`, where a position is the index (as a string) of
an action in the trajectory's `content`, the way ADP's `generate_thoughts_std.py` keys it. In
the landing folder it sits beside the dataset as `<dataset>.generated_thoughts.json` (next to
`<dataset>.json`, `<dataset>.jsonl` or the folder `<dataset>/`); it is read first, as one raw
record, and each thought goes into the `description` of the action it is keyed to, marked
`thought_source = adp_generated`, so the thoughts stage never asks a model for it again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.schemas.standardized import ACTION_KINDS
from bigaction_assets.sources.base import ParsedRecord, RecordRejected, Rejection, Tally
from bigaction_assets.sources.raw_text import RawText

CACHE_SUFFIX = ".generated_thoughts.json"
ADP_GENERATED = "adp_generated"
# In an event's `extra`: the description the record itself held, which export gives back.
DESCRIPTION_BEFORE = "_description_before_thought"
_IN_FOLDER = "generated_thoughts.json"


def is_cache_file(path: Path | str) -> bool:
    return str(path).endswith(CACHE_SUFFIX)


def attach_caches(folder: Path, datasets: dict[str, list[Path]]) -> dict[str, list[Path]]:
    """Each dataset's files with its thought cache, if it has one, first: the standardize
    step must know the thoughts before it meets the trajectories they belong to.

    A cache elsewhere (among a dataset's shards, or beside no dataset) is attached to nothing:
    the other datasets go on, and the unread-files table lists it with the layout to use."""
    for name, files in datasets.items():
        datasets[name] = [path for path in files if path.name != _IN_FOLDER]
    caches = sorted(folder.glob(f"*{CACHE_SUFFIX}")) if folder.is_dir() else []
    for cache in caches:
        name = cache.name[: -len(CACHE_SUFFIX)]
        if name in datasets:
            datasets[name] = [cache, *datasets[name]]
    return datasets


def read_cache_file(path: Path) -> Iterator[RawText]:
    """The whole cache as one raw record, exactly as written (it is one JSON object).

    It is read whole, and its thoughts are held while the dataset is standardized: a cache is
    a few KB per trajectory (SWE-Gym's: 1.8 MB for its 491), far less than the trajectories.
    """
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        readable = data.decode("utf-8", errors="backslashreplace").encode()
        yield RawText(1, 0, 0, readable, "invalid_utf8", f"byte {exc.start} is not UTF-8")
        return
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        yield RawText(1, 0, 0, data, "malformed_json", str(exc))
        return
    yield RawText(1, 0, 0, data, value=value)


@dataclass
class ThoughtCache:
    """The thoughts of one dataset's cache, and what became of them."""

    record: ParsedRecord
    thoughts: dict[str, dict[int, str]] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    tallies: Counter[str] = field(default_factory=Counter)

    def entry_rejection(
        self, trajectory: str, key: Any, value: Any, reason: str, detail: str
    ) -> Rejection:
        """A reject that points at the cache file and shows only the entry at fault."""
        text = orjson.dumps({trajectory: {str(key): value}}).decode()
        entry = ParsedRecord(self.record.file, self.record.line, 0, text, None)
        return Rejection(entry, reason, detail)

    def apply(self, trajectory: str, events: list[dict[str, Any]]) -> list[Rejection]:
        """Give the trajectory's actions their cached thoughts; a thought keyed to no action
        of it is a reject, never dropped. A thought the record already has stays."""
        rejections = []
        self.seen.add(trajectory)
        for position, thought in self.thoughts.get(trajectory, {}).items():
            event = events[position] if position < len(events) else None
            if event is None or event["kind"] not in ACTION_KINDS or event["actor"] != "agent":
                what = f"a {event['actor']} {event['kind']}" if event else "past its end"
                detail = f"trajectory {trajectory!r}: content[{position}] is {what}, no action"
                rejections.append(
                    self.entry_rejection(
                        trajectory, position, thought, "thought_keyed_to_no_action", detail
                    )
                )
            elif not thought.strip():  # ADP's generator writes "" when it could not parse a reply
                self.tallies["adp_thoughts_empty"] += 1
            elif (event.get("description") or "").strip():
                self.tallies["adp_thoughts_behind_recorded"] += 1
            else:
                extra = orjson.loads(event["extra"]) if event.get("extra") else {}
                extra[DESCRIPTION_BEFORE] = event.get("description")
                event.update(description=thought, thought_source=ADP_GENERATED, extra=_json(extra))
                self.tallies["adp_thoughts_used"] += 1
        return rejections

    def final_tallies(self) -> Iterator[Tally]:
        """What became of the cache's thoughts, once every trajectory has been seen."""
        absent = sum(len(v) for k, v in self.thoughts.items() if k not in self.seen)
        self.tallies["adp_thoughts_for_absent_trajectories"] += absent
        for name, count in sorted(self.tallies.items()):
            if count:
                yield Tally(name, count)


def load_thought_cache(record: ParsedRecord) -> tuple[ThoughtCache, list[Rejection]]:
    """The cache record's thoughts, and a reject for each entry that is not one.

    Raises:
        RecordRejected: the cache is not a JSON object of objects.
    """
    if not isinstance(record.value, dict):
        kind = type(record.value).__name__
        raise RecordRejected("wrong_type", f"a thought cache is a JSON object, not {kind}")
    cache = ThoughtCache(record)
    rejections = []
    for trajectory, entries in record.value.items():
        if not isinstance(entries, dict):
            detail = f"trajectory {trajectory!r} maps to {type(entries).__name__}, not an object"
            rejections.append(cache.entry_rejection(trajectory, "", entries, "wrong_type", detail))
            continue
        for key, thought in entries.items():
            if not (key.isascii() and key.isdigit()):
                detail = f"trajectory {trajectory!r}: {key!r} is not a content position"
                reason = "invalid_value"
            elif not isinstance(thought, str):
                detail = f"trajectory {trajectory!r}: the thought at {key} is not a string"
                reason = "wrong_type"
            else:
                cache.thoughts.setdefault(trajectory, {})[int(key)] = thought
                continue
            rejections.append(cache.entry_rejection(trajectory, key, thought, reason, detail))
    return cache, rejections


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
