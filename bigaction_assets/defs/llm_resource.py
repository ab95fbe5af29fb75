"""The LLM resource: a chat model behind any OpenAI-compatible server, set from the environment."""

import functools
import json
import os

import dagster as dg
from pydantic import Field

from bigaction_assets.llm.budget import Price, PriceTable
from bigaction_assets.llm.client import ClientSettings
from bigaction_assets.llm.session import LLMConfig


class ModelPrice(dg.Config):
    input_per_million: float
    """US dollars per million prompt tokens."""
    output_per_million: float
    """US dollars per million completion tokens."""


class LLMResource(dg.ConfigurableResource):
    """A chat model behind any OpenAI-compatible server (OpenAI, vLLM, llama.cpp); with no model
    set it is unconfigured and the stages that need it say so instead of calling anything."""

    base_url: str | None = None
    """The server's root, e.g. `http://127.0.0.1:8080/v1`; unset means OpenAI itself."""
    model: str | None = None
    """The model name the server knows; unset means no model is configured."""
    api_key: str | None = Field(default=None, repr=False)
    """Bind with `dg.EnvVar("OPENAI_API_KEY")` so the value is never stored or shown."""
    temperature: float = 0.0
    max_tokens: int = 256
    """Most tokens of one reply."""
    concurrency: int = 8
    """Calls in flight at once, per run (the `llm` pool limits runs that call at once)."""
    timeout_seconds: float = 60.0
    max_attempts: int = 6
    """Requests per call on 429, 5xx, timeouts and connection errors, the first included."""
    max_output_attempts: int = 3
    """Requests per call when replies are malformed or fail validation."""
    max_failed_runs: int = 3
    """Runs a failing call is tried in before it stays failed (raise it to try again)."""
    prices: dict[str, ModelPrice] = {}  # noqa: RUF012 - pydantic copies defaults
    """Prices by model; a model not listed is counted as free (local servers)."""
    budget_tokens: int | None = None
    """Tokens (in and out) one run may spend; None for no limit."""
    budget_usd: float | None = None
    """US dollars one run may spend; None for no limit."""

    @property
    def configured(self) -> bool:
        return bool(self.model)

    def config(self) -> LLMConfig:
        if not self.model:
            raise ValueError(f"no model configured: set {LLM_MODEL_ENV}")
        if not self.base_url and not self.api_key:
            raise ValueError(f"{LLM_KEY_ENV} is needed to call OpenAI (or set {LLM_URL_ENV})")
        prices = {
            name: Price(price.input_per_million, price.output_per_million)
            for name, price in self.prices.items()
        }
        return LLMConfig(
            client=ClientSettings(
                model=self.model, base_url=self.base_url, api_key=self.api_key,
                temperature=self.temperature, max_tokens=self.max_tokens,
                timeout_seconds=self.timeout_seconds, max_attempts=self.max_attempts,
            ),
            prices=PriceTable(prices), concurrency=self.concurrency,
            budget_tokens=self.budget_tokens, budget_usd=self.budget_usd,
            max_output_attempts=self.max_output_attempts, max_failed_runs=self.max_failed_runs,
        )  # fmt: skip


LLM_URL_ENV = "BIGACTION_LLM_BASE_URL"
LLM_MODEL_ENV = "BIGACTION_LLM_MODEL"
LLM_KEY_ENV = "OPENAI_API_KEY"


def _number(name: str, kind: type[int] | type[float]) -> int | float | None:
    value = os.environ.get(name)
    try:
        return kind(value) if value else None
    except ValueError:
        raise ValueError(f"{name} must be {kind.__name__}, not {value!r}") from None


def _prices() -> dict[str, ModelPrice]:
    text = os.environ.get("BIGACTION_LLM_PRICES") or "{}"
    try:
        return {
            name: ModelPrice(input_per_million=float(pair[0]), output_per_million=float(pair[1]))
            for name, pair in json.loads(text).items()
        }
    except (ValueError, TypeError, IndexError, AttributeError):
        raise ValueError(
            f'BIGACTION_LLM_PRICES must be JSON like {{"<model>": [input, output]}}, not {text!r}'
        ) from None


def llm_from_env() -> LLMResource:
    """The model of `BIGACTION_LLM_MODEL` at `BIGACTION_LLM_BASE_URL` with `OPENAI_API_KEY`;
    optional: `BIGACTION_LLM_CONCURRENCY`, `BIGACTION_LLM_MAX_TOKENS`,
    `BIGACTION_LLM_TEMPERATURE`, `BIGACTION_LLM_TIMEOUT_SECONDS`, `BIGACTION_LLM_BUDGET_TOKENS`,
    `BIGACTION_LLM_BUDGET_USD`, `BIGACTION_LLM_PRICES` (JSON: `{"<model>": [input, output]}`
    dollars per million tokens); see `.env.example`."""
    key = dg.EnvVar(LLM_KEY_ENV) if os.environ.get(LLM_KEY_ENV) else None
    optional = {
        "concurrency": _number("BIGACTION_LLM_CONCURRENCY", int),
        "max_tokens": _number("BIGACTION_LLM_MAX_TOKENS", int),
        "temperature": _number("BIGACTION_LLM_TEMPERATURE", float),
        "timeout_seconds": _number("BIGACTION_LLM_TIMEOUT_SECONDS", float),
    }
    return LLMResource(
        base_url=os.environ.get(LLM_URL_ENV) or None,
        model=os.environ.get(LLM_MODEL_ENV) or None,
        api_key=key,
        prices=_prices(),
        budget_tokens=_number("BIGACTION_LLM_BUDGET_TOKENS", int),
        budget_usd=_number("BIGACTION_LLM_BUDGET_USD", float),
        **{name: value for name, value in optional.items() if value is not None},
    )


@functools.cache
def environment_llm() -> LLMResource:
    """`llm_from_env()`, made once: the assets that call a model (thoughts, model_answers) bind
    this one object, as Dagster requires of a resource key shared by assets."""
    return llm_from_env()
