"""Erasing forgotten senders from every lake table (from the landing area: landing_erasure.py),
and finding any row of theirs that is left.

A table's rows are tied to a sender by its columns, whatever the table: `user_pseudonym` or
`session_pseudonym` (a forgotten pseudonym), `episode_id` (an episode of theirs), or an id of
the form `<episode id>#<n>` in `record_id`, `example_id` or `rejected_item_id`. Any asset with
one of these columns is covered without knowing about it. In partitions made from telemetry
landing files, a record kept as text (`text` of `raw_records`, `raw_text` of `rejects`: lines
that could not be read or standardized, so have no id) is theirs when it holds one of their
pseudonyms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from bigaction_assets.lake import Lake, local_root, partition_exists, partition_file
from bigaction_assets.lake_reader import (
    iter_partition_batches,
    parquet_reader,
    read_arrow,
    table_files,
)
from bigaction_assets.lake_writer import open_partition
from bigaction_assets.lakefs import LakeRoot
from bigaction_assets.telemetry_batches import ADAPTER

PSEUDONYM_COLUMNS = ("user_pseudonym", "session_pseudonym")
EPISODE_COLUMN = "episode_id"
# `<episode id>#<n>`; `rejected_item_id` is the other side of a reward preference pair
DERIVED_ID_COLUMNS = ("record_id", "example_id", "rejected_item_id")
TEXT_COLUMNS = ("text", "raw_text")  # a landed line as it stood, in telemetry partitions
TELEMETRY_PARTITION = f"{ADAPTER}."  # `telemetry.<day>` of the datasets partitions
PRIVACY_GROUP = "privacy"


@dataclass(frozen=True)
class Forgotten:
    """Who is forgotten: their pseudonyms and every episode of theirs we ever held."""

    pseudonyms: frozenset[str] = frozenset()
    episodes: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.pseudonyms or self.episodes)

    def text_pattern(self) -> str:
        """A regex for a text holding one of their pseudonyms (a sender's, or a run's: the
        last part of a telemetry episode id)."""
        runs = {episode.rsplit("/", 1)[-1] for episode in self.episodes}
        return "|".join(sorted(re.escape(p) for p in self.pseudonyms | runs if p))


def row_mask(
    table: pa.Table | pa.RecordBatch, forgotten: Forgotten, texts: bool = False
) -> pa.Array | None:
    """True for each row of a forgotten sender; None when the table has no identity column.
    With `texts`, a row whose `text`/`raw_text` holds one of their pseudonyms is theirs too."""
    names = table.schema.names
    masks = []
    pseudonyms = pa.array(sorted(forgotten.pseudonyms), pa.string())
    episodes = pa.array(sorted(forgotten.episodes), pa.string())
    for column in PSEUDONYM_COLUMNS:
        if column in names:
            masks.append(pc.is_in(table[column], value_set=pseudonyms))
    if EPISODE_COLUMN in names:
        masks.append(pc.is_in(table[EPISODE_COLUMN], value_set=episodes))
    for column in DERIVED_ID_COLUMNS:
        kind = table.schema.field(column).type if column in names else None
        if kind is not None and (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            prefix = pc.replace_substring_regex(table[column], pattern="#[^#]*$", replacement="")
            masks.append(pc.is_in(prefix, value_set=episodes))
    pattern = forgotten.text_pattern() if texts else ""
    for column in TEXT_COLUMNS if pattern else ():
        if column in names:
            masks.append(pc.match_substring_regex(table[column], pattern=pattern))
    if not masks:
        return None
    combined = masks[0]
    for mask in masks[1:]:
        combined = pc.or_(combined, mask)
    return pc.fill_null(combined, False)


def identity_columns(schema: pa.Schema, texts: bool = False) -> list[str]:
    own = (
        *PSEUDONYM_COLUMNS,
        EPISODE_COLUMN,
        *DERIVED_ID_COLUMNS,
        *(TEXT_COLUMNS if texts else ()),
    )
    return [name for name in schema.names if name in own]


def holds_texts(path: Path | str) -> bool:
    """Whether the partition file (a path, or an object key) was made from telemetry landing
    files."""
    name = path.name if isinstance(path, Path) else path.rsplit("/", 1)[-1]
    return name.startswith(TELEMETRY_PARTITION)


def count_in_file(path: Path | str, forgotten: Forgotten, lake: Lake | None = None) -> int:
    """Rows of a forgotten sender in one Parquet file (a path, or a key of the object-store
    `lake`), reading only identity columns."""
    if isinstance(path, Path):
        parquet = pq.ParquetFile(path)
    else:
        assert lake is not None, "an object key is read through its lake"
        parquet = parquet_reader(lake, path)
    texts = holds_texts(path)
    columns = identity_columns(parquet.schema_arrow, texts)
    if not columns or not forgotten:
        return 0
    total = 0
    for index in range(parquet.num_row_groups):
        batch = parquet.read_row_group(index, columns=columns)
        mask = row_mask(batch, forgotten, texts)
        total += (pc.sum(mask).as_py() or 0) if mask is not None else 0
    return total


def _stem(file: Path | str) -> str:
    return file.stem if isinstance(file, Path) else file.rsplit("/", 1)[-1].removesuffix(".parquet")


def erase_partition(lake: Lake, group: str, asset: str, key: str, forgotten: Forgotten) -> int:
    """Rewrite one partition without the forgotten rows (atomically: on a store, the new object
    replaces the old in one step); rows erased."""
    path = partition_file(lake, group, asset, key)
    if count_in_file(path, forgotten, lake) == 0:
        return 0
    erased = 0
    on_disk = isinstance(path, Path)
    schema = pq.read_schema(path) if on_disk else parquet_reader(lake, path).schema_arrow
    # the old file stays readable while the new one is written beside it and swapped in
    with open_partition(lake, group, asset, key, schema) as writer:
        texts = holds_texts(path)
        for batch in iter_partition_batches(lake, group, asset, key, batch_rows=2_000):
            keep = pc.invert(row_mask(batch, forgotten, texts))
            kept = batch.filter(keep)
            erased += batch.num_rows - kept.num_rows
            writer.write(pa.Table.from_batches([kept], schema=schema))
    return erased


def lake_tables(lake: Lake) -> Iterable[tuple[str, str]]:
    """(group, asset) of every table in the lake, but the privacy group's own."""
    folder = local_root(lake)
    if folder is None:
        assert isinstance(lake, LakeRoot)
        groups = [g for g in lake.list_dirs() if g != PRIVACY_GROUP]
        return [(group, asset) for group in groups for asset in lake.list_dirs(group)]
    if not folder.is_dir():
        return []
    return [
        (group.name, asset.name)
        for group in sorted(p for p in folder.iterdir() if p.is_dir() and p.name != PRIVACY_GROUP)
        for asset in sorted(p for p in group.iterdir() if p.is_dir())
    ]


def erase_lake(lake: Lake, forgotten: Forgotten) -> dict[str, dict[str, int]]:
    """Erase the forgotten rows from every partition of every lake table, and the pages only
    their events showed. Rows erased, by table and partition.

    Each partition is replaced whole, one after another, so a crash midway leaves each either
    as it was or erased, and running it again erases the ones left; a partition's pages go
    before its events, so no crash leaves a page of theirs that a rerun would not find."""
    erased: dict[str, dict[str, int]] = {}
    if not forgotten:
        return erased
    for group, asset in lake_tables(lake):
        for stem in [_stem(f) for f in table_files(lake, group, asset)]:
            events = (group, asset) == ("standardized", "events")
            if events:
                for table, pages in drop_their_pages(lake, stem, forgotten).items():
                    erased.setdefault(table, {})[stem] = pages
            count = erase_partition(lake, group, asset, stem, forgotten)
            if count:
                erased.setdefault(f"{group}/{asset}", {})[stem] = count
    return erased


# where a partition's pages are: its standardized table, and the raw layer's (the pages cut
# out of its raw records: `page_cuts`), the same rows while nothing has rewritten either
PAGE_TABLES = (("standardized", "dom_snapshots"), ("raw", "raw_pages"))


def drop_their_pages(lake: Lake, key: str, forgotten: Forgotten) -> dict[str, int]:
    """Remove the pages of a partition that no event but the forgotten senders' shows (none
    while its events hold no row of theirs), from each table that holds them; how many, by
    table. `raw_pages` also keeps every page cut out of a raw record that is still there (the
    raw tables are erased before the standardized ones): without it the record could not be
    read whole, and the record, if theirs, held the page before the cut too."""
    events = partition_file(lake, "standardized", "events", key)
    if not partition_exists(lake, "standardized", "events", key):
        return {}
    if count_in_file(events, forgotten, lake) == 0:
        return {}
    columns = ["html_sha", *identity_columns(parquet_reader(lake, events).schema_arrow)]
    table = read_arrow(lake, "standardized", "events", key, columns=columns)
    theirs = row_mask(table, forgotten, holds_texts(events))
    kept = table["html_sha"] if theirs is None else table.filter(pc.invert(theirs))["html_sha"]
    used = pc.unique(pc.drop_null(kept.combine_chunks()))
    dropped = {}
    for group, asset in PAGE_TABLES:
        if partition_exists(lake, group, asset, key):
            keep = used
            if group == "raw":
                keep = pc.unique(pa.concat_arrays([used, _cut_out(lake, key).cast(used.type)]))
            orphans = _keep_pages(lake, group, asset, key, keep)
            if orphans:
                dropped[f"{group}/{asset}"] = orphans
    return dropped


def _cut_out(lake: Lake, key: str) -> pa.Array:
    """The html_sha of every page cut out of the partition's raw records (`page_cuts`)."""
    shas: set[str] = set()
    if partition_exists(lake, "raw", "raw_records", key):
        names = parquet_reader(
            lake, partition_file(lake, "raw", "raw_records", key)
        ).schema_arrow.names
        if "pages" in names:
            notes = read_arrow(lake, "raw", "raw_records", key, columns=["pages"])["pages"]
            for note in pc.drop_null(notes).to_pylist():
                shas.update(cut[1] for cut in orjson.loads(note))
    return pa.array(sorted(shas), pa.large_string())


def _keep_pages(lake: Lake, group: str, asset: str, key: str, used: pa.Array) -> int:
    shas = read_arrow(lake, group, asset, key, columns=["html_sha"])["html_sha"]
    orphans = pc.sum(pc.invert(pc.is_in(shas, value_set=used))).as_py() or 0
    if not orphans:
        return 0
    schema = parquet_reader(lake, partition_file(lake, group, asset, key)).schema_arrow
    with open_partition(lake, group, asset, key, schema) as writer:
        for batch in iter_partition_batches(lake, group, asset, key, 256):
            keep = pc.is_in(batch["html_sha"], value_set=used)
            writer.write(pa.Table.from_batches([batch.filter(keep)], schema=schema))
    return orphans
