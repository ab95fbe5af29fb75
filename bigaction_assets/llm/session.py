"""One run's calls, from the configuration a resource gives: the client, the cache, the budget
and the workers, opened and closed around the jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bigaction_assets.llm.budget import Budget, PriceTable
from bigaction_assets.llm.cache import CacheLocation, open_cache
from bigaction_assets.llm.caller import CachedCaller, Job, RunStats, run_jobs
from bigaction_assets.llm.client import ChatClient, ClientSettings
from bigaction_assets.llm.interrupts import propagating_interrupts


@dataclass(frozen=True)
class LLMConfig:
    """Everything a run of calls needs to know (the resource's fields, resolved).

    Attributes:
        client: the server, model and sampling.
        prices: US dollars per million tokens by model.
        concurrency: calls in flight at most.
        budget_tokens: tokens (in and out) one Dagster run may spend; None for no limit.
        budget_usd: dollars one Dagster run may spend; None for no limit.
        max_output_attempts: requests per call when replies are malformed or invalid.
        max_failed_runs: runs a failing call is tried in before it is left as failed.
    """

    client: ClientSettings
    prices: PriceTable = field(default_factory=PriceTable)
    concurrency: int = 8
    budget_tokens: int | None = None
    budget_usd: float | None = None
    max_output_attempts: int = 3
    max_failed_runs: int = 3


def run_calls(
    config: LLMConfig,
    cache_path: CacheLocation,
    run_id: str,
    make_jobs: Callable[[CachedCaller], Iterable[Job]],
) -> RunStats:
    """Run the jobs `make_jobs(caller)` gives, `config.concurrency` at a time; their stats."""

    async def main() -> RunStats:
        client = ChatClient(config.client, connections=config.concurrency)
        with open_cache(cache_path) as cache:
            budget = Budget(config.budget_tokens, config.budget_usd, cache.run_spend(run_id))
            caller = CachedCaller(
                client, cache, config.prices, budget, run_id,
                config.max_output_attempts, config.max_failed_runs,
            )  # fmt: skip
            try:
                await propagating_interrupts(run_jobs(make_jobs(caller), config.concurrency))
            finally:
                await client.close()
            caller.stats.retries.update(client.retries)
            return caller.stats

    # asyncio's own loop, not uvloop: uvloop was 20% cheaper per call but runs signal handlers
    # as loop callbacks, so Dagster's interrupt (a terminated run) was logged and the calls
    # went on (tests/test_thoughts_resume.py).
    return asyncio.run(main())
