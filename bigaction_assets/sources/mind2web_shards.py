"""Mind2Web step rows in Hub Parquet shards: a task belongs to the shard holding its first
row, and that shard's partition reads on into the next shard while the task goes on.

The Hub cuts a dataset into shards by size, so a task's steps can run across the cut. Each
shard's partition takes its own rows but the leading ones of the task the shard before it ends
with (that shard's partition reads them), then the leading rows of the next shard that
continue its own last task: every row in exactly one partition, every episode whole. To know
where tasks end at the edges it reads only the task column of the neighbours' edge row groups.
A task longer than a whole shard cannot be followed that far: its rows past the next shard are
kept by the shard they are in, so the task becomes two episodes of one id, which the blocking
check `episode_ids_unique` reports rather than anything being dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bigaction_assets.sources.mind2web_hub import task_key
from bigaction_assets.sources.raw_text import RawText

TASK_COLUMNS = ("annotation_id", "annotation_uid")  # as `mind2web_hub.task_key` reads them
_UNKNOWN = object()  # no task: an empty or unreadable file, or a row that is not a step


def shard_inputs(files: list[Path]) -> list[list[Path]]:
    """Per shard (in name order): its own file, then the two shards before it (where the task
    its first rows may continue began) and the one after (where its last task may run on).
    They are the partition's inputs, so an edit to a shard also re-runs the partitions of its
    neighbours, whose files change only if a task across an edge did."""
    return [
        [path, *files[max(i - 2, 0) : i], *files[i + 1 : i + 2]] for i, path in enumerate(files)
    ]


def read_edges(
    read: Callable[[Path], Iterator[RawText]], files: list[Path]
) -> Iterator[tuple[Path, RawText]]:
    """The records of the shard `files[0]` that its partition owns, with the file of each
    (`files` as `shard_inputs` gives them)."""
    own, *others = files
    before = [path for path in others if path < own]
    after = [path for path in others if path > own]
    inherited = (
        _inherited_task(before[-1], before[-2] if len(before) > 1 else None) if before else _UNKNOWN
    )
    leading, last = True, _UNKNOWN
    for raw in read(own):
        task = _task(raw)
        if leading and task is not _UNKNOWN and task == inherited:
            continue  # the task the shard before ends with: its partition reads this row
        leading, last = False, task
        yield own, raw
    if last is _UNKNOWN or not after:
        return  # nothing of its own, or the dataset's last shard
    for raw in read(after[0]):
        if _task(raw) != last:
            return
        yield after[0], raw


def _task(raw: RawText) -> Any:
    value = raw.value
    if raw.error is not None or not isinstance(value, dict):
        return _UNKNOWN
    task = task_key(value)
    return _UNKNOWN if task is None else task


def _inherited_task(before: Path, earlier: Path | None) -> Any:
    """The task the shard `before` ends with, if its owner (the partition of the shard where it
    began) reads on into the next shard: it began in `before` itself. Not when `before` is all
    one task that `earlier` ends with too (its owner reads only one shard on), nor when a file
    cannot be read (then the rows stay where they are, and a split task shows in the check)."""
    try:
        first, last = _edge_tasks(before)
        if first == last and earlier is not None and _edge_tasks(earlier)[1] == last:
            return _UNKNOWN
    except (OSError, pa.ArrowException, ValueError):
        return _UNKNOWN
    return last


def _edge_tasks(path: Path) -> tuple[Any, Any]:
    """The task of a Parquet shard's first and last rows, from the task column alone."""
    parquet = pq.ParquetFile(path)
    column = next((c for c in TASK_COLUMNS if c in parquet.schema_arrow.names), None)
    groups = [g for g in range(parquet.num_row_groups) if parquet.metadata.row_group(g).num_rows]
    if column is None or not groups:
        return _UNKNOWN, _UNKNOWN
    first = parquet.read_row_group(groups[0], columns=[column]).column(0)
    last = parquet.read_row_group(groups[-1], columns=[column]).column(0)
    return _value(first[0].as_py()), _value(last[-1].as_py())


def _value(task: Any) -> Any:
    return _UNKNOWN if task is None else task
