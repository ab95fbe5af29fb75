"""A dataset's thoughts: every missing one asked of the model through the durable cache, then
the `thoughts` rows built from the cache in the order of the episodes.

Two passes. The first runs the calls (a rerun answers from the cache and calls nothing); it
keeps only a small record per action. The second reads the finished calls back from the cache
in chunks and yields one row per action, so the table always reflects the cache, whatever
order the calls finished in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from bigaction_assets.lake import Lake
from bigaction_assets.llm.cache import CacheLocation, CallKey, open_cache
from bigaction_assets.llm.caller import BUDGET_EXHAUSTED, CachedCaller, CallRequest, Job, RunStats
from bigaction_assets.llm.session import LLMConfig, run_calls
from bigaction_assets.thoughts.context import ContextSettings
from bigaction_assets.thoughts.output import thought_validator
from bigaction_assets.thoughts.prompts import PROMPT_VERSION, templates
from bigaction_assets.thoughts.requests import ThoughtRequest, iter_thought_requests

LOOKUP_CHUNK = 500
EXAMPLES = 3
STATUS_OF_OUTCOME = {"ok": "generated", "failed": "failed", "deferred": "deferred"}


@dataclass(frozen=True)
class ActionRecord:
    """What pass one keeps per action: where it is, its call, how the call ended."""

    episode_id: str
    idx: int
    kind: str
    key: CallKey
    status: str


@dataclass
class ThoughtsRun:
    """The run's stats, a record per action in episode order, and the first few thoughts."""

    stats: RunStats
    records: list[ActionRecord] = field(default_factory=list)
    examples: list[dict[str, str]] = field(default_factory=list)


def ask_for_thoughts(
    lake: Lake, key: str, config: LLMConfig, cache_path: CacheLocation, run_id: str,
    settings: ContextSettings, version: str = PROMPT_VERSION,
) -> ThoughtsRun:  # fmt: skip
    """Pass one: make (or find in the cache) every thought the partition lacks."""
    slots: list[ActionRecord | None] = []
    examples: dict[int, dict[str, str]] = {}
    validate = thought_validator(templates(version)[0])

    def job(caller: CachedCaller, request: ThoughtRequest, slot: int) -> Job:
        async def run() -> None:
            call = CallRequest(request.messages, (request.episode_id,))
            outcome = await caller.call(call, validate)
            status = STATUS_OF_OUTCOME[outcome.status]
            slots[slot] = ActionRecord(
                request.episode_id, request.idx, request.kind, outcome.key, status
            )
            if outcome.output is not None and slot < 10 * EXAMPLES:
                examples[slot] = {
                    "episode_id": request.episode_id, "idx": str(request.idx),
                    "action": request.action, "thought": outcome.output,
                }  # fmt: skip

        return run

    def jobs(caller: CachedCaller) -> Iterator[Job]:
        for request in iter_thought_requests(lake, key, settings, version):
            slots.append(None)
            yield job(caller, request, len(slots) - 1)

    stats = run_calls(config, cache_path, run_id, jobs)
    first = [examples[slot] for slot in sorted(examples)[:EXAMPLES]]
    return ThoughtsRun(stats, [record for record in slots if record is not None], first)


def thought_rows(
    records: list[ActionRecord],
    cache_path: CacheLocation,
    dataset: str,
    version: str = PROMPT_VERSION,
) -> Iterator[dict[str, Any]]:
    """Pass two: one `thoughts` row per action, in episode order, from the cache."""
    with open_cache(cache_path) as cache:
        for start in range(0, len(records), LOOKUP_CHUNK):
            chunk = records[start : start + LOOKUP_CHUNK]
            calls = cache.get_many(r.key for r in chunk if r.status != "deferred")
            for record in chunk:
                yield _row(record, calls.get(record.key), dataset, version)


def _row(record: ActionRecord, call: Any, dataset: str, version: str) -> dict[str, Any]:
    row: dict[str, Any] = {
        "episode_id": record.episode_id, "idx": record.idx, "dataset": dataset,
        "action_kind": record.kind, "model": record.key.model, "prompt_version": version,
        "prompt_sha": record.key.prompt_sha, "params_sha": record.key.params_sha,
        "status": "deferred", "thought": None, "failure_reason": None, "failure_detail": None,
        "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0,
    }  # fmt: skip
    if record.status == "deferred":
        return {**row, "failure_reason": BUDGET_EXHAUSTED}
    if call is None:  # erased from the cache between the passes: asked again next run
        return {**row, "failure_reason": "not_in_cache"}
    generated = call.status == "ok"
    return {
        **row,
        "status": "generated" if generated else "failed",
        "thought": call.output if generated else None,
        "failure_reason": None if generated else call.reason,
        "failure_detail": None if generated else call.detail,
        "prompt_tokens": call.prompt_tokens,
        "completion_tokens": call.completion_tokens,
        "cost_usd": call.cost_usd,
    }
