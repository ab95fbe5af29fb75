"""Standardized tables made in the raw step's own pass, set aside for the standardize step."""

# The raw step reads and parses every record anyway; standardizing each one there spares the
# standardize step reading the whole raw table back and parsing it again. The staged tables are
# taken only when they are exactly what that step would write from the raw table: the raw
# partition file is still the one the pass wrote (a rerun or an erasure rewrites it), the
# standardize code is the same version, and the pass met nothing whose outcome depends on the
# whole dataset (an unreadable record, whose reject comes before all others; a repeated record
# id, which changes episode ids). Otherwise the standardize step works from the raw table.
# The pages are not staged: they are the raw layer's `raw_pages` (the pass cuts them out of the
# records' texts, `page_cuts`), which `dom_snapshots` takes as it is, linked or copied.
# Where they are staged, on a local disk or in an object store: staging_area.py.

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pandera.polars as pandera

from bigaction_assets import ingest, standardized_rows
from bigaction_assets.hashing import pages_for_cutting
from bigaction_assets.images.resolve import ImageResolver
from bigaction_assets.lake import Lake
from bigaction_assets.page_cuts import cut_pages, page_piece
from bigaction_assets.privacy.withhold import SenderFilter
from bigaction_assets.schemas import arrow_schema
from bigaction_assets.sink import ValidatedSink
from bigaction_assets.sources.base import SourceAdapter
from bigaction_assets.staging_area import staging_area

FORMAT = 2  # of the manifest below
PAGES = "dom_snapshots"  # the staged table that is `raw_pages` itself
RAW_PAGES = ("raw", "raw_pages")
PREVIEW_ROWS = 5
RecordKey = tuple[str, int]  # a raw record in its partition: (file, record_index)
# table -> (contract, columns its preview shows)
Tables = dict[str, tuple[type[pandera.DataFrameModel], tuple[str, ...]]]


def discard(lake: Lake, group: str, tables: list[str], key: str) -> None:
    """Remove the partition's manifest and whatever any pass staged for it."""
    staging_area(lake).discard(group, tables, key)


class StagedTables:
    """The standardized rows of one partition, validated and written to staged files, but for
    its pages, which go to the raw step's `raw_pages` (`pages`), and which the pass also hands
    to whoever cuts them out of the records (`new_pages`)."""

    def __init__(
        self, lake: Lake, group: str, key: str, tables: Tables, version: str, pages: ValidatedSink
    ) -> None:
        self.area, self.key, self.tables, self.version = staging_area(lake), key, tables, version
        self.pages = pages
        # what the pass's cutting has not yet seen: pages with the records they came from, and
        # the records whose episode or reject is out (`read_and_stage`)
        self.new_pages: list[tuple[dict[str, Any], tuple[RecordKey, ...]]] = []
        self.finished: list[RecordKey] = []
        self.pass_id = uuid.uuid4().hex
        self.area.discard(group, list(tables), key)
        self.writers = {
            name: self.area.writer(group, name, key, self.pass_id, arrow_schema(model))
            for name, (model, _) in tables.items()
            if name != PAGES
        }
        self.sinks = {
            name: ValidatedSink(
                model, self.writers[name], max_rows=ingest.SINK_ROWS, max_chars=ingest.SINK_CHARS
            )
            for name, (model, _) in tables.items()
            if name != PAGES
        }
        self.previews: dict[str, list[dict[str, Any]]] = {name: [] for name in tables}
        self.reasons: Counter[str] = Counter()
        self.tallies: Counter[str] = Counter()
        self.usable = True

    def __enter__(self) -> StagedTables:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None:  # the raw step failed: nothing staged may outlive it
            self.abandon()

    def add(self, row: standardized_rows.Row) -> None:
        if row.table == standardized_rows.TALLIES:
            self.tallies[row.values["name"]] += row.values["count"]
            return
        if row.table == PAGES:
            self.pages.add(row.values)
            self.new_pages.append((row.values, row.records))
        else:
            self.sinks[row.table].add(row.values)
            if row.table in ("episodes", "rejects"):
                self.finished.extend(row.records)
        if row.table == "rejects":
            self.reasons[row.values["reason"]] += 1
        preview = self.previews[row.table]
        if len(preview) < PREVIEW_ROWS:
            preview.append({c: row.values.get(c) for c in self.tables[row.table][1]})

    def take_news(
        self,
    ) -> tuple[list[tuple[dict[str, Any], tuple[RecordKey, ...]]], list[RecordKey]]:
        """The pages added since the last call, each with the records it may be cut out of,
        and the records finished since (their episode or reject is out)."""
        news = self.new_pages, self.finished
        self.new_pages, self.finished = [], []
        return news

    def abandon(self) -> None:
        """The standardize step will work from the raw table instead."""
        if self.usable:
            self.usable = False
            for writer in self.writers.values():
                writer.abort()

    def finish(self) -> None:
        """Commit the staged files and, last, the manifest that vouches for them and for the
        raw partition and the pages it wrote (call it once both are committed)."""
        if not self.usable:
            return
        for sink in self.sinks.values():
            sink.flush()
        for writer in self.writers.values():
            writer.commit()
        manifest = {
            "format": FORMAT,
            "pass": self.pass_id,
            "version": self.version,
            "raw_file": self.area.raw_stamp(self.key),
            "pages_file": self.area.raw_stamp(self.key, RAW_PAGES[1]),
            "totals": {
                **{name: sink.total for name, sink in self.sinks.items()},
                PAGES: self.pages.total,
            },
            "previews": self.previews,
            "rejects_by_reason": dict(self.reasons),
            "tallies": dict(self.tallies),
        }
        self.area.write_manifest(self.key, self.pass_id, orjson.dumps(manifest))


def take(
    lake: Lake, group: str, key: str, tables: list[str], version: str
) -> dict[str, Any] | None:
    """Move the staged tables into place and return their manifest, if they are still exactly
    what standardizing the raw partition would write; else discard them and return None."""
    area = staging_area(lake)
    text = area.read_manifest(key)
    manifest = orjson.loads(text) if text is not None else None
    current = (
        manifest is not None
        and manifest["format"] == FORMAT
        and manifest["version"] == version
        and isinstance(manifest.get("pass"), str)
        and manifest["raw_file"] is not None
        and manifest["raw_file"] == area.raw_stamp(key)
        and manifest["pages_file"] is not None
        and manifest["pages_file"] == area.raw_stamp(key, RAW_PAGES[1])
    )
    try:
        if current:
            assert manifest is not None
            for name in tables:
                if name == PAGES:
                    area.copy_partition(RAW_PAGES, (group, PAGES), key)
                else:
                    area.hand_over(group, name, key, manifest["pass"])
            area.delete_manifest(key)
            return manifest
    except FileNotFoundError:  # a rerun of the raw step discarded them meanwhile
        pass
    area.discard(group, tables, key)
    return None


class _ReadFailed(Exception):
    """Reading or writing a raw record failed: the raw step's own error, never swallowed."""


# Rows held back until their record is standardized, so that its pages can be cut out of them:
# one record for a task per record, a task's rows for step rows (the adapter ends a task when
# the next one's first row comes). Past these bounds the oldest goes on with what it has.
WAITING_ROWS = 256
WAITING_BYTES = 64 << 20


class _Waiting:
    """A raw row held back, and the pages found to stand in its text so far."""

    __slots__ = ("done", "pages", "row")

    def __init__(self, row: dict[str, Any]) -> None:
        self.row, self.pages, self.done = row, [], False


class _RowsToCut:
    """The raw rows of the pass in order, each handed to `add_raw` once its record is done,
    with its pages cut out (`page_cuts`): the order the raw table and `raw_pages` keep."""

    def __init__(self, staged: StagedTables, add_raw: Callable[[dict[str, Any]], None]) -> None:
        self.staged, self.add_raw = staged, add_raw
        self.waiting: dict[RecordKey, _Waiting] = {}
        self.held_bytes = 0

    def hold(self, row: dict[str, Any]) -> None:
        self.waiting[row["file"], row["record_index"]] = _Waiting(row)
        self.held_bytes += len(row["text"])

    def settle(self, everything: bool = False) -> None:
        pages, finished = self.staged.take_news()
        for page, records in pages:
            holder = self._holder(page, records)
            if holder is not None:
                holder.pages.append(page)
        for index in finished:
            if index in self.waiting:
                self.waiting[index].done = True
        while self.waiting:
            head = next(iter(self.waiting.values()))
            full = len(self.waiting) > WAITING_ROWS or self.held_bytes > WAITING_BYTES
            if not (everything or head.done or full):
                return
            del self.waiting[head.row["file"], head.row["record_index"]]
            self.held_bytes -= len(head.row["text"])
            head.row["text"], head.row["pages"] = cut_pages(head.row["text"], head.pages)
            self.add_raw(head.row)

    def _holder(self, page: dict[str, Any], records: tuple[RecordKey, ...]) -> _Waiting | None:
        """The held row whose text the page can be in: a record's own, or among a task's
        rows the first whose text holds a piece of the page as written."""
        holders = [self.waiting[i] for i in records if i in self.waiting]
        if len(holders) <= 1:
            return holders[0] if holders else None
        piece = page_piece(page)
        if piece is None:
            return None
        # a task's n-th page is likeliest in its n-th row: look there first
        start = sum(len(h.pages) for h in holders) % len(holders)
        for holder in holders[start:] + holders[:start]:
            if piece in holder.row["text"]:
                return holder
        return None


def read_and_stage(
    adapter: SourceAdapter,
    dataset: str,
    files: list[Path],
    landing: Path,
    add_raw: Callable[[dict[str, Any]], None],
    staged: StagedTables | None,
    withhold: SenderFilter | None = None,
) -> None:
    """Hand every raw row to `add_raw`, but those of forgotten senders `withhold` knows; while
    `staged` stays usable, standardize the readable records into it in the same pass, with the
    values reading them produced. A row is handed on once its record is standardized, with the
    pages that came out of it cut out of its text (they are in `raw_pages`)."""
    records = ingest.parsed_raw_records(adapter, dataset, files, landing, withhold)
    if staged is None:
        for row, _ in records:
            add_raw(row)
        return
    seen_ids: set[str] = set()
    held = _RowsToCut(staged, add_raw)

    def readable() -> Iterator[dict[str, Any]]:
        while True:
            try:
                row, value = next(records)
                held.settle()
                record_id = row["record_id"]
                if row["error"] is not None or record_id in seen_ids:
                    held.settle(everything=True)  # the rows before it, in order
                    add_raw(row)
                    staged.abandon()
                    return
            except StopIteration:
                return
            except Exception as exc:
                raise _ReadFailed from exc
            if record_id is not None:
                seen_ids.add(record_id)
            held.hold(row)
            yield {**row, "value": value}

    images = ImageResolver(landing, adapter.name, dataset)
    try:
        with pages_for_cutting():
            for out in standardized_rows.standardize(adapter, dataset, readable(), images=images):
                if not staged.usable:
                    break
                staged.add(out)
    except _ReadFailed as failed:
        staged.abandon()
        raise failed.__cause__ from None
    except Exception:  # the adapter's own failure: the standardize step meets it again
        staged.abandon()
    held.settle(everything=True)
    for row, _ in records:  # whatever the standardizing pass left unread
        add_raw(row)
