"""Prices per model and a run's budget in tokens or money.

A call is started only when the budget still holds its worst case: the prompt's tokens
(counted in cl100k_base; a server counting with another tokenizer may differ by a little) plus
`max_tokens` of reply. That amount is reserved while the call runs and replaced by what the
server reports when it ends, so concurrent calls cannot overrun the budget together. Once the
next call does not fit, no new call starts; what is left stays for the next run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bigaction_assets.llm.cache import Spend

# Framing tokens OpenAI counts per chat message, and for the reply's start.
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (
            prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million
        ) / 1_000_000


FREE = Price(0.0, 0.0)


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name; a model not listed costs nothing (a local server) and is flagged
    so metadata can say its cost is unknown."""

    prices: Mapping[str, Price] = field(default_factory=dict)

    def price(self, model: str) -> Price:
        return self.prices.get(model, FREE)

    def knows(self, model: str) -> bool:
        return model in self.prices

    def spend(self, model: str, prompt_tokens: int, completion_tokens: int) -> Spend:
        cost = self.price(model).cost(prompt_tokens, completion_tokens)
        return Spend(prompt_tokens, completion_tokens, cost)


@dataclass
class Budget:
    """A run's limits (None: no limit) and what it has spent and holds in reservations.

    `spent` starts at what the run already spent (another asset or partition of the same run),
    so a budget is per Dagster run, not per asset.
    """

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    spent: Spend = field(default_factory=Spend)
    reserved: Spend = field(default_factory=Spend)
    exhausted: bool = False

    def try_reserve(self, worst_case: Spend) -> bool:
        """Hold `worst_case` for a call about to start; False (and exhausted) if it does not
        fit. Once exhausted, nothing more is reserved in this run."""
        if self.exhausted:
            return False
        total = self.spent + self.reserved + worst_case
        over_tokens = self.max_tokens is not None and total.tokens > self.max_tokens
        over_cost = self.max_cost_usd is not None and total.cost_usd > self.max_cost_usd
        if over_tokens or over_cost:
            self.exhausted = True
            return False
        self.reserved = self.reserved + worst_case
        return True

    def settle(self, reservation: Spend, actual: Spend) -> None:
        """Release a reservation and count what the call really cost."""
        self.reserved = Spend(
            self.reserved.prompt_tokens - reservation.prompt_tokens,
            self.reserved.completion_tokens - reservation.completion_tokens,
            self.reserved.cost_usd - reservation.cost_usd,
        )
        self.spent = self.spent + actual
