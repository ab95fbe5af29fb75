"""An async chat client for any OpenAI-compatible server, with our own retry loop.

The `openai` client's own retries are off (`max_retries=0`): which failures are retried, how
long to wait and how often is decided here (`retry.py`), so it is the same for every server
and testable. Concurrency is bounded by the caller (`caller.py`), not here.

`openai` (and aiohttp under it, `transport.py`) is imported when the first client is made, not
with this module: the code location imports this module for its settings, and every process
that loads it (each run's, each worker, the code server, `make demo`) would otherwise spend
~0.7 s of CPU importing a client that only a step calling a model uses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from bigaction_assets.llm.retry import Backoff, Failure, classify

if TYPE_CHECKING:
    import openai

# a message's content is text, or a list of parts (text and `image_url`) for vision models
Messages = list[dict[str, Any]]
Sleep = Callable[[float], Awaitable[None]]
# llama.cpp and vLLM accept any key; the openai client refuses to start without one.
PLACEHOLDER_KEY = "unused"


@dataclass(frozen=True)
class ClientSettings:
    """How to reach the model and sample from it.

    Attributes:
        model: the model name the server knows.
        base_url: the server's OpenAI-compatible root (`http://127.0.0.1:8080/v1`); None for
            OpenAI itself.
        api_key: the key, if the server wants one (never logged).
        temperature: sampling temperature.
        max_tokens: most tokens one reply may hold.
        timeout_seconds: one request's limit; past it the request counts as a timeout.
        max_attempts: requests per call at most, the first included, on transient failures.
        backoff: waits between those attempts.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: float = 0.0
    max_tokens: int = 256
    timeout_seconds: float = 60.0
    max_attempts: int = 6
    backoff: Backoff = field(default_factory=Backoff)

    def sampling(self) -> dict[str, Any]:
        """The parameters that change a reply; they are part of every cache key."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass(frozen=True)
class Completion:
    """One reply: its text, why it stopped, and the tokens the server counted (None if not)."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    requests: int = 1
    """HTTP requests it took, retries included."""


class CallError(Exception):
    """A call that did not yield a reply: a permanent failure, or transient ones until the
    attempts ran out. `retries` counts the transient failures that were retried, by reason."""

    def __init__(self, failure: Failure, requests: int, retries: dict[str, int]) -> None:
        super().__init__(f"{failure.reason}: {failure.detail}")
        self.failure = failure
        self.requests = requests
        self.retries = retries


@dataclass
class ChatClient:
    """`complete(messages)` with retries; `requests` counts every HTTP request sent."""

    settings: ClientSettings
    sleep: Sleep = asyncio.sleep
    connections: int = 8
    """HTTP connections kept open: the calls in flight at most."""
    rng: random.Random = field(default_factory=random.Random)
    requests: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    _client: openai.AsyncOpenAI | None = None

    @property
    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            from bigaction_assets.llm.transport import http_client

            self._client = openai.AsyncOpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or PLACEHOLDER_KEY,
                timeout=self.settings.timeout_seconds,
                max_retries=0,
                http_client=http_client(self.connections),
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def _request(self, messages: Messages, temperature: float) -> Completion:
        self.requests += 1
        body = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": temperature,
            "max_tokens": self.settings.max_tokens,
        }
        # `post` sends the body as it is and returns the reply's bytes: the typed
        # `chat.completions.create` walks every message through its TypedDict transforms and
        # builds a `ChatCompletion` model, ~1 ms of CPU per call that capped throughput at high
        # concurrency (benchmarks/README.md); `read_completion` checks the fields we use.
        reply = await self.client.post("/chat/completions", cast_to=bytes, body=body)
        return read_completion(reply)

    async def complete(self, messages: Messages, temperature: float | None = None) -> Completion:
        """The model's reply to `messages` (at `temperature`, else the settings' one).

        Raises:
            CallError: a permanent failure (4xx other than 429, a malformed response), or
                transient ones (429, 5xx, timeouts, connection errors) `max_attempts` times.
        """
        import openai

        retries: dict[str, int] = {}
        if temperature is None:
            temperature = self.settings.temperature
        for attempt in range(1, self.settings.max_attempts + 1):
            try:
                completion = await self._request(messages, temperature)
                return dataclasses.replace(completion, requests=attempt)
            except (openai.APIError, ValueError) as error:
                failure = classify(error)
            backoff = self.settings.backoff
            too_long = (failure.retry_after or 0.0) > backoff.max_retry_after
            if not failure.retryable or too_long or attempt == self.settings.max_attempts:
                raise CallError(failure, attempt, retries)
            retries[failure.reason] = retries.get(failure.reason, 0) + 1
            self.retries[failure.reason] = self.retries.get(failure.reason, 0) + 1
            await self.sleep(backoff.delay(attempt, failure, self.rng))
        raise AssertionError("unreachable: the last attempt returns or raises")


def read_completion(reply: bytes) -> Completion:
    """The first choice of a chat completion's JSON body, and the tokens it reports.

    Raises:
        ValueError: the body is not JSON, or has no first choice with a message whose content
            is text (or null), or a finish reason or token count of the wrong type.
    """
    try:
        data = orjson.loads(reply)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"the response is not JSON: {error}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("the response holds no choices")
    message = choices[0].get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str | None):
        raise ValueError("the first choice holds no message text")
    finish_reason = choices[0].get("finish_reason")
    if not isinstance(finish_reason, str | None):
        raise ValueError(f"the finish reason is not text: {finish_reason!r}")
    usage = data.get("usage") or {}
    if not isinstance(usage, dict):
        raise ValueError(f"the usage is not an object: {usage!r}")
    return Completion(
        text=message.get("content") or "",
        finish_reason=finish_reason,
        prompt_tokens=_token_count(usage, "prompt_tokens"),
        completion_tokens=_token_count(usage, "completion_tokens"),
    )


def _token_count(usage: dict[str, Any], name: str) -> int | None:
    count = usage.get(name)
    if count is not None and (isinstance(count, bool) or not isinstance(count, int)):
        raise ValueError(f"usage.{name} is not a whole number: {count!r}")
    return count
