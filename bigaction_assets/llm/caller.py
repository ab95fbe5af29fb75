"""Calls through the durable cache, within a budget, with bounded concurrency.

`CachedCaller.call` answers from the cache when it can; otherwise it reserves the call's worst
case in the budget, asks the model (transient failures are retried by the client), validates
the reply (an invalid one is asked again, `max_output_attempts` in all), and commits the result
— output or failure — before returning. `run_jobs` runs jobs on a fixed number of workers, so
at most `concurrency` calls are in flight and jobs are made only as workers take them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from bigaction_assets.llm.budget import TOKENS_PER_MESSAGE, TOKENS_PER_REPLY, Budget, PriceTable
from bigaction_assets.llm.cache_sql import CachedCall, CallKey, Spend, SqlCallCache
from bigaction_assets.llm.client import CallError, ChatClient, Completion, Messages
from bigaction_assets.llm.image_parts import (
    IMAGE_TOKENS_ESTIMATE,
    content_text,
    image_count,
    keyed_messages,
)
from bigaction_assets.tokens import count_tokens

BUDGET_EXHAUSTED = "budget_exhausted"


class InvalidOutput(Exception):
    """A reply that is not what was asked for; `reason` is a short code."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


Validator = Callable[[Completion], str]


def accept_text(completion: Completion) -> str:
    """The reply as it is (a benchmark scores whatever the model said)."""
    return completion.text


@dataclass(frozen=True)
class CallRequest:
    """Messages for the model and the subjects (episode ids) whose data they hold."""

    messages: Messages
    subjects: tuple[str, ...]


@dataclass(frozen=True)
class Outcome:
    """`ok` with an output, `failed` with a reason, or `deferred` (left for the next run)."""

    key: CallKey
    status: str
    output: str | None = None
    reason: str | None = None
    detail: str | None = None
    from_cache: bool = False


@dataclass
class RunStats:
    """What a run did, for the materialization's metadata."""

    requests: int = 0
    cache_hits: int = 0
    completed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    failed_before: Counter[str] = field(default_factory=Counter)
    invalid_outputs: Counter[str] = field(default_factory=Counter)
    retries: Counter[str] = field(default_factory=Counter)
    stale_outputs: Counter[str] = field(default_factory=Counter)
    deferred: int = 0
    spend: Spend = field(default_factory=Spend)


def sha256_json(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def prompt_sha(messages: Messages) -> str:
    """The prompt's part of a cache key: its messages, each inline image by its bytes' sha256."""
    return sha256_json(keyed_messages(messages))


def prompt_tokens_estimate(messages: Messages) -> int:
    """cl100k_base tokens of the messages as a chat model sees them, images at a fixed cost."""
    text_tokens = sum(count_tokens(content_text(m.get("content"))) for m in messages)
    images = sum(image_count(m.get("content")) for m in messages)
    return (
        text_tokens + IMAGE_TOKENS_ESTIMATE * images
        + TOKENS_PER_MESSAGE * len(messages) + TOKENS_PER_REPLY
    )  # fmt: skip


@dataclass
class CachedCaller:
    """One run's calls: the client, the cache (its only writer), prices and the budget.

    Attributes:
        max_output_attempts: requests per call at most when replies are malformed or invalid.
        max_failed_runs: a call that failed in this many runs is not tried again.
        retry_temperature: the least temperature of a retry after an invalid reply; at the
            usual temperature 0 the same prompt would give the same reply again. The cache key
            keeps the configured parameters: the retry answers the same request.
    """

    client: ChatClient
    cache: SqlCallCache
    prices: PriceTable
    budget: Budget
    run_id: str
    max_output_attempts: int = 3
    max_failed_runs: int = 3
    retry_temperature: float = 0.7
    stats: RunStats = field(default_factory=RunStats)

    @property
    def model(self) -> str:
        return self.client.settings.model

    @property
    def params_sha(self) -> str:
        return sha256_json(self.client.settings.sampling())

    def key(self, messages: Messages) -> CallKey:
        return CallKey(self.model, prompt_sha(messages), self.params_sha)

    def _from_cache(
        self, cached: CachedCall, request: CallRequest, validate: Validator
    ) -> Outcome | None:
        if cached.status == "ok":
            # an output stored under older rules is checked against today's; one they refuse
            # is asked again (and replaced), so tightening a check never keeps a bad output
            try:
                validate(Completion(cached.output or "", "stop", None, None))
            except InvalidOutput as invalid:
                self.stats.stale_outputs[invalid.reason] += 1
                return None
            self.stats.cache_hits += 1
            self.cache.link(cached.key, request.subjects)
            return Outcome(cached.key, "ok", cached.output, from_cache=True)
        if cached.failed_runs >= self.max_failed_runs:
            self.stats.failed_before[cached.reason or "unknown"] += 1
            return Outcome(cached.key, "failed", None, cached.reason, cached.detail, True)
        return None  # failed in fewer runs than the bound: try again

    async def call(self, request: CallRequest, validate: Validator = accept_text) -> Outcome:
        key = self.key(request.messages)
        cached = self.cache.get(key)
        if cached is not None:
            answered = self._from_cache(cached, request, validate)
            if answered is not None:
                return answered
        # an output today's rules refuse is what this call replaces, and nothing else finished
        stale = cached.output if cached is not None and cached.status == "ok" else None
        spent, requests = Spend(), 0
        reason, detail = "no_attempt", ""
        temperature = self.client.settings.temperature
        estimate = prompt_tokens_estimate(request.messages)
        for _attempt in range(self.max_output_attempts):
            worst = self.prices.spend(self.model, estimate, self.client.settings.max_tokens)
            if not self.budget.try_reserve(worst):
                self.cache.add_spend(self.run_id, spent)
                self.stats.deferred += 1
                return Outcome(key, "deferred", reason=BUDGET_EXHAUSTED)
            try:
                completion = await self.client.complete(request.messages, temperature)
            except CallError as error:
                self.budget.settle(worst, Spend())
                requests += error.requests
                self.stats.requests += error.requests
                reason, detail = error.failure.reason, error.failure.detail
                if reason == "malformed_response":
                    self.stats.invalid_outputs[reason] += 1
                    continue
                break
            requests += completion.requests
            self.stats.requests += completion.requests
            actual = self._actual(completion, estimate)
            self.budget.settle(worst, actual)
            spent = spent + actual
            self.stats.spend = self.stats.spend + actual
            try:
                output = validate(completion)
            except InvalidOutput as invalid:
                reason, detail = invalid.reason, invalid.detail
                self.stats.invalid_outputs[reason] += 1
                temperature = max(temperature, self.retry_temperature)
                continue
            self.cache.record_ok(
                key, output, request.subjects, requests, spent, self.run_id, spent, stale
            )
            self.stats.completed += 1
            return Outcome(key, "ok", output)
        self.cache.record_failure(
            key, reason, detail, request.subjects, requests, spent, self.run_id, spent, stale
        )
        self.stats.failures[reason] += 1
        return Outcome(key, "failed", None, reason, detail)

    def _actual(self, completion: Completion, estimate: int) -> Spend:
        prompt = completion.prompt_tokens if completion.prompt_tokens is not None else estimate
        reply = completion.completion_tokens
        if reply is None:
            reply = count_tokens(completion.text)
        return self.prices.spend(self.model, prompt, reply)


Job = Callable[[], Awaitable[None]]


async def run_jobs(jobs: Iterable[Job], concurrency: int) -> None:
    """Run every job on `concurrency` workers; a job is made only when a worker takes it.

    Workers start a turn of the event loop apart: started together, each would build its
    first prompt before any call could leave, and all first calls (and their replies) would
    then come as one burst.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    iterator = iter(jobs)

    async def worker() -> None:
        for job in iterator:  # one thread: workers take jobs from the iterator in turn
            await job()

    workers: list[asyncio.Task[None]] = []
    try:
        for _ in range(concurrency):
            workers.append(asyncio.create_task(worker()))
            await asyncio.sleep(0)  # one turn: the last worker's connection and call get going
        await asyncio.gather(*workers)
    finally:  # a failure or a cancellation stops every worker, started or not yet awaited
        for task in workers:
            task.cancel()
