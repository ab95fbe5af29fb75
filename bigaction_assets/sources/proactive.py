"""ProactiveBench (thunlp/ProactiveAgent): event traces and annotated reward data as episodes.

- Event traces, a JSON array of turns per file (`[{observation{time, event},
  agent_response{candidate_task[]}, task_status}]`): one episode per file,
  `proactive/<file stem>`. Each turn is an observation of what the user did (an environment
  `text_observation`) and the assistant's answer, an `api_action` `propose_tasks(tasks=[...])`
  (an empty list when it proposed nothing); `task_status` (whether the user needed help) and the
  turn number go to `extra`.
- Annotated reward data, JSONL (`{obs[], pred_task, valid, help_needed, annotation[],
  category}`) in datasets named `reward*` (a file, or a folder such as ProactiveAgent's own
  `reward_data/` with `train_data.jsonl` and `test_data.jsonl`): one episode per row,
  `proactive/reward-<sha of obs and task>`: the observations, then the proposal; the people's
  verdict goes to `details.judgement`. A row whose verdict or category breaks ProactiveAgent's
  rules (`reward.rules`) is rejected with why. Each file's name says its split
  (`source_split`), which the reward sets keep; a file whose name says none has no split.

Both are benchmark data with proposals that people rejected: the episodes say `train_on: false`
so the SFT stage never trains an agent on them; they feed the annotation app and
`reward_examples`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from bigaction_assets.reward.rules import check_annotated
from bigaction_assets.sources.base import (
    LandingFilesAdapter,
    ParsedRecord,
    RecordRejected,
    Rejection,
    StandardRecord,
)

SOURCE = "proactive"
REWARD_PREFIX = "reward"
PROPOSE = "propose_tasks"
THEMES = {"code": "coding", "writing": "writing"}
NOT_FOR_TRAINING = "ProactiveBench evaluation data; its proposals include ones people rejected"


REWARD_SPLITS = ("train", "test")
_WORD = re.compile(r"[^a-z0-9]+")


def is_reward_dataset(dataset: str) -> bool:
    return dataset == REWARD_PREFIX or dataset.startswith(REWARD_PREFIX + "_")


def reward_split(file: str, dataset: str) -> str | None:
    """The split a reward file's name says (`train_data.jsonl`, `reward_test.jsonl`), else the
    first folder between it and its dataset's folder that says one (`reward_data/train/0.jsonl`).

    A name says a split when one of its words is `train` or `test` (so `contest` does not); a
    name with both says none. Folders above the dataset's are not read: they are not the source's.
    """
    path = PurePosixPath(file)
    for name in [path.name.split(".", 1)[0], *reversed(path.parent.parts)]:
        words = set(_WORD.split(name.lower()))
        said = [split for split in REWARD_SPLITS if split in words]
        if said:
            return said[0] if len(said) == 1 else None
        if name == dataset:
            break
    return None


def reward_source_id(obs: Any, task: Any) -> str:
    """`reward-<16 hex>` from what was judged: rows have no id of their own."""
    return "reward-" + hashlib.sha256(orjson.dumps([obs, task])).hexdigest()[:16]


class ProactiveAdapter(LandingFilesAdapter):
    name = "proactive"
    description = "ProactiveBench event traces (JSON arrays) and annotated reward data (JSONL)."
    source = SOURCE

    def record_id(self, value: Any) -> str | None:
        if isinstance(value, dict) and "obs" in value and "pred_task" in value:
            return reward_source_id(value["obs"], value["pred_task"])
        return None  # a trace turn is known by its file and position

    def shard_files(self, dataset: str, files: list[Path]) -> list[list[Path]] | None:
        """None: a trace file is one episode, so a partition per file would be a partition per
        episode, and the whole benchmark is a few hundred small files; a folder is one dataset."""
        return None

    def redistributable(self, dataset: str) -> bool:
        return True  # Apache-2.0 (landing/PROVENANCE.md)

    def standardize(
        self, records: Iterator[ParsedRecord], dataset: str
    ) -> Iterator[StandardRecord | Rejection]:
        if is_reward_dataset(dataset):
            for record in records:
                try:
                    standard = reward_episode(record.value, reward_split(record.file, dataset))
                except RecordRejected as exc:
                    yield Rejection(record, exc.reason, exc.detail)
                    continue
                standard.origin = record
                yield standard
            return
        turns: list[tuple[ParsedRecord, dict[str, Any]]] = []
        for record in records:
            if turns and record.file != turns[0][0].file:
                yield trace_episode(turns)
                turns = []
            try:
                turns.append((record, _turn(record.value)))
            except RecordRejected as exc:
                yield Rejection(record, exc.reason, exc.detail)
        if turns:
            yield trace_episode(turns)


def _field(value: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in value:
        raise RecordRejected("missing_field", f"{where} has no `{key}`")
    if not isinstance(value[key], kind):
        raise RecordRejected("wrong_type", f"{where}.{key} is {type(value[key]).__name__}")
    return value[key]


def _observation(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise RecordRejected("wrong_type", f"{where} is {type(value).__name__}, not an object")
    time = _field(value, "time", (str, int, float), where)
    event = _field(value, "event", str, where)
    return {"time": str(time), "event": event}


def _tasks(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise RecordRejected("wrong_type", f"{where} is not a list of strings")
    return value


def _turn(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordRejected("wrong_type", f"turn is {type(value).__name__}, not an object")
    observation = _observation(_field(value, "observation", dict, "turn"), "turn.observation")
    response = _field(value, "agent_response", dict, "turn")
    tasks = _tasks(_field(response, "candidate_task", list, "turn.agent_response"), "candidates")
    status = _field(value, "task_status", bool, "turn")
    return {"observation": observation, "tasks": tasks, "task_status": status}


def _observation_event(observation: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "text_observation", "actor": "environment", "content": observation["event"],
        "extra": orjson.dumps({**extra, "time": observation["time"]}).decode(),
    }  # fmt: skip


def _proposal_event(tasks: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "kind": "api_action", "actor": "agent", "function": PROPOSE,
        "kwargs": orjson.dumps({"tasks": tasks}).decode(),
        "extra": orjson.dumps(extra).decode() if extra else None,
    }  # fmt: skip


def trace_episode(turns: list[tuple[ParsedRecord, dict[str, Any]]]) -> StandardRecord:
    """One trace file as an episode: per turn, the observation then the proposal."""
    first = turns[0][0]
    stem = Path(first.file).stem
    events: list[dict[str, Any]] = []
    for record, turn in turns:
        number = record.record_index
        events.append(_observation_event(turn["observation"], turn=number))
        events.append(_proposal_event(turn["tasks"], turn=number, task_status=turn["task_status"]))
    theme = THEMES.get(stem.split("_", 1)[0])
    episode = {
        "source": SOURCE, "source_format": SOURCE, "source_split": "test", "source_id": stem,
        "task": None, "website": None, "domain": theme, "subdomain": None,
        "details": orjson.dumps(
            {"kind": "trace", "turns": len(turns), "train_on": False, "why": NOT_FOR_TRAINING}
        ).decode(),
    }  # fmt: skip
    return StandardRecord(episode, events, origin=first)


def reward_episode(value: Any, split: str | None) -> StandardRecord:
    """One annotated reward row as an episode: observations, then the judged proposal."""
    if not isinstance(value, dict):
        raise RecordRejected("wrong_type", f"row is {type(value).__name__}, not an object")
    given = _field(value, "obs", list, "row")
    obs = [_observation(o, f"row.obs[{i}]") for i, o in enumerate(given)]
    if not obs:
        raise RecordRejected("invalid_value", "row.obs is empty")
    task = _field(value, "pred_task", (str, type(None)), "row")
    valid = _field(value, "valid", bool, "row")
    help_needed = _field(value, "help_needed", bool, "row")
    votes = _field(value, "annotation", list, "row")
    if not all(isinstance(v, bool) for v in votes):
        raise RecordRejected("wrong_type", "row.annotation is not a list of booleans")
    named = value.get("category")
    if named is not None and not isinstance(named, str):
        raise RecordRejected("wrong_type", f"row.category is {type(named).__name__}")
    problem = check_annotated(task, valid, help_needed, votes, named)
    if problem is not None:
        raise RecordRejected("invalid_value", problem)
    events = [_observation_event(o) for o in obs]
    events.append(_proposal_event([task] if task is not None else []))
    judgement = {"valid": valid, "help_needed": help_needed, "annotation": votes}
    episode = {
        "source": SOURCE, "source_format": SOURCE, "source_split": split,
        "source_id": reward_source_id(value["obs"], task), "task": None, "website": None,
        "domain": None, "subdomain": None,
        "details": orjson.dumps(
            {"kind": "reward", "judgement": judgement, "train_on": False, "why": NOT_FOR_TRAINING}
        ).decode(),
    }  # fmt: skip
    return StandardRecord(episode, events)


ADAPTER = ProactiveAdapter()
