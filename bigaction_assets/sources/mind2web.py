"""Mind2Web: the original task JSON, and the one-step-per-row forms of SeeAct's examples and of
the Hub (mind2web_clean, Multimodal-Mind2Web: `mind2web_hub`).

A task becomes one episode: the instruction as a user text observation, then per action a web
observation (its page, stored once in `dom_snapshots`) and the api action taken on the target
element. Every candidate element of every step goes to `web_candidates` for the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from bigaction_assets.shard_keys import SHARD_SEPARATOR
from bigaction_assets.sources import mind2web_fields as fields
from bigaction_assets.sources import mind2web_shards, mind2web_steps
from bigaction_assets.sources.base import (
    JSON_SUFFIXES,
    LandingFilesAdapter,
    ParsedRecord,
    RecordRejected,
    Rejection,
    StandardRecord,
)
from bigaction_assets.sources.hub_image import image_cell_ref
from bigaction_assets.sources.landing import shard_split
from bigaction_assets.sources.mind2web_hub import rows_split, step_row, task_key
from bigaction_assets.sources.raw_text import RawText

SOURCE = "mind2web"
SPLITS = ("train", "test_task", "test_website", "test_domain")
_TASK_FIELDS = ("annotation_id", "confirmed_task", "actions")
SHOT = "the step's screenshot"
_ACTION_FIELDS = ("action_uid", "operation", "pos_candidates", "neg_candidates")


class Mind2WebAdapter(LandingFilesAdapter):
    name = "mind2web"
    description = (
        "Mind2Web raw tasks (JSON array of tasks), or step rows: SeeAct's (JSONL) and the "
        "Hub's (mind2web_clean, Multimodal-Mind2Web Parquet shards)."
    )
    source = SOURCE
    suffixes = (*JSON_SUFFIXES, ".parquet")

    def record_id(self, value: Any) -> str | None:
        """A task's annotation_id; a step row's action_uid (a task spans several rows)."""
        if not isinstance(value, dict):
            return None
        key = "action_uid" if "actions" not in value and "operation" in value else "annotation_id"
        return value[key] if isinstance(value.get(key), str) else None

    def shard_files(self, dataset: str, files: list[Path]) -> list[list[Path]] | None:
        """Raw task files (`.json`, a task whole in each record): each alone. The Hub's Parquet
        step rows: each with its neighbours, since the Hub cuts shards by size and a task's
        steps can run on into the next shard (`mind2web_shards`). Anything else (SeeAct's JSONL
        step rows, a mix): one partition."""
        if all(path.suffix == ".json" for path in files):
            return super().shard_files(dataset, files)
        if all(path.suffix == ".parquet" for path in files):
            return mind2web_shards.shard_inputs(files)
        return None

    def read_partition(self, dataset: str, files: list[Path]) -> Iterator[tuple[Path, RawText]]:
        """A partition's records with the file each is in: a step-row shard's own rows less
        those of the task the shard before it ends with, then the rows its last task runs on
        with into the next shard; any other dataset's files whole, in order."""
        if SHARD_SEPARATOR in dataset and files[0].suffix == ".parquet":
            return mind2web_shards.read_edges(self.read, files)
        return ((path, raw) for path in files for raw in self.read(path))

    def redistributable(self, dataset: str) -> bool:
        """Only the train split: Mind2Web asks that its test sets never be redistributed (so
        they stay out of training data); a dataset of unknown split is treated like one."""
        return dataset_split(dataset) == "train"

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection]:
        named = dataset_split(dataset)
        pending: list[ParsedRecord] = []  # consecutive step rows of one task
        done: set[Any] = set()  # tasks whose rows have ended
        for record in records:
            value = record.value
            if isinstance(value, dict) and "actions" not in value and "operation" in value:
                if pending and task_key(pending[0].value) != task_key(value):
                    yield from _task_from_steps(pending, named, done)
                    pending = []
                pending.append(record)
                continue
            if pending:
                yield from _task_from_steps(pending, named, done)
                pending = []
            split = file_split(record.file) or named
            yield _guard(record, lambda r=record, s=split: import_task(r.value, s))
        if pending:
            yield from _task_from_steps(pending, named, done)


def dataset_split(dataset: str) -> str | None:
    """Mind2Web names its files by split (`train_0`, `test_website_3`); so do our datasets."""
    for split in sorted(SPLITS, key=len, reverse=True):
        if dataset == split or dataset.startswith(split + "_"):
            return split
    return None


def file_split(file: str) -> str | None:
    """The split a file's name gives: a Hub shard's (`test_task-00000-of-00002.parquet`), or
    Mind2Web's own (`train_3.json`)."""
    return shard_split(file) or dataset_split(file.rsplit("/", 1)[-1].split(".", 1)[0])


def _guard(record: ParsedRecord, build: Any) -> StandardRecord | Rejection:
    try:
        standard = build()
    except RecordRejected as exc:
        return Rejection(record, exc.reason, exc.detail)
    standard.origin = record
    return standard


def import_task(task: Any, split: str | None) -> StandardRecord:
    """One raw Mind2Web task as an episode with its events, pages and candidates."""
    task = fields.require(task, _TASK_FIELDS, "task")
    actions = task["actions"]
    if not isinstance(actions, list):
        raise RecordRejected("wrong_type", "task.actions is not a list")
    reprs = task.get("action_reprs") or []
    if not isinstance(reprs, list):
        raise RecordRejected("wrong_type", "task.action_reprs is not a list")
    steps = [
        (step, action, reprs[step] if step < len(reprs) else None)
        for step, action in enumerate(actions)
    ]
    return _build(task, steps, split, {"action_reprs": reprs})


def _task_from_steps(
    rows: list[ParsedRecord], named: str | None, done: set[Any]
) -> Iterator[StandardRecord | Rejection]:
    """Step rows of one task: the step number is the count of previous actions. A task's rows
    must be contiguous (files are read as streams); rows that come back to an ended task are
    rejected, since its episode is already out."""
    key = task_key(rows[0].value)
    if isinstance(key, str) and key in done:
        detail = f"rows of task {key!r} resume after another task's: a task's rows must be together"
        yield from (Rejection(row, "non_contiguous_steps", detail) for row in rows)
        return
    if isinstance(key, str):
        done.add(key)

    def build() -> StandardRecord:
        steps = []
        values = []
        for row in rows:
            value = fields.require(
                step_row(row.value),
                ("annotation_id", "confirmed_task", *_ACTION_FIELDS),
                "step row",
            )
            if "screenshot" in value:  # Multimodal-Mind2Web's; other rows may have one named
                value[mind2web_steps.IMAGE] = image_cell_ref(
                    row, value["screenshot"], "screenshot", SHOT
                )
            previous = value.get("previous_actions") or []
            if not isinstance(previous, list):
                raise RecordRejected("wrong_type", "step row previous_actions is not a list")
            steps.append((len(previous), value, value.get("action_repr")))
            values.append(value)
        steps.sort(key=lambda step: step[0])
        first = values[0]
        previous_actions = first.get("previous_actions") or []
        split = rows_split(values) or file_split(rows[0].file) or named
        return _build(
            first, steps, split, {"format": "step_rows", "previous_actions": previous_actions}
        )

    result = _guard(rows[0], build)
    if isinstance(result, Rejection):
        yield from (Rejection(row, result.reason, result.detail) for row in rows)
    else:
        result.members = rows
        yield result


def _build(
    task: dict[str, Any],
    steps: list[tuple[int, Any, str | None]],
    split: str | None,
    details: dict[str, Any],
) -> StandardRecord:
    annotation_id = fields.text(task["annotation_id"], "task.annotation_id")
    instruction = fields.text(task["confirmed_task"], "task.confirmed_task")
    if not annotation_id:
        raise RecordRejected("missing_field", "task.annotation_id is empty")
    events: list[dict[str, Any]] = [
        {"kind": "text_observation", "actor": "user", "content": instruction}
    ]
    snapshots: dict[str, dict[str, Any]] = {}
    candidates: list[dict[str, Any]] = []
    for step, action, action_repr in steps:
        where = f"actions[{step}]"
        action = fields.require(action, _ACTION_FIELDS, where)
        if not fields.text(action["action_uid"], f"{where}.action_uid"):  # a key of candidates
            raise RecordRejected("missing_field", f"{where}.action_uid is empty")
        observation, snapshot = mind2web_steps.observation(action, step, where)
        if snapshot is not None:
            snapshots.setdefault(snapshot["html_sha"], snapshot)
        step_candidates = fields.candidates(action, step, where)
        candidates.extend(step_candidates)
        events.append(observation)
        events.append(mind2web_steps.api_action(action, step, action_repr, step_candidates, where))
    episode = {
        "source": SOURCE,
        "source_format": "mind2web",
        "source_split": split,
        "source_id": annotation_id,
        "task": instruction,
        "website": fields.text(task.get("website"), "task.website"),
        "domain": fields.text(task.get("domain"), "task.domain"),
        "subdomain": fields.text(task.get("subdomain"), "task.subdomain"),
        "details": orjson.dumps(details).decode(),
    }
    return StandardRecord(episode, events, list(snapshots.values()), candidates)


ADAPTER = Mind2WebAdapter()
