"""Which failed calls are worth another try, and how long to wait before it.

Only transient failures are retried: 429 (rate limited), any 5xx, timeouts and connection
errors. The wait is exponential backoff with full jitter (a uniform draw in [0, base * 2^n],
capped), so many workers that failed together do not retry together; a server's `Retry-After`
(or OpenAI's `retry-after-ms`) is a floor under that draw.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Failure:
    """Why a request failed: a short reason code, a detail for people, and whether to retry.

    `retry_after` is the server's requested wait in seconds, when it named one.
    """

    reason: str
    detail: str
    retryable: bool
    retry_after: float | None = None


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter.

    Attributes:
        base_seconds: the ceiling of the first wait; it doubles with each retry.
        cap_seconds: the most any drawn wait may be.
        max_retry_after: a server asking for a longer wait than this is not waited for; the
            call fails and is left for a later run.
    """

    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, retry: int, failure: Failure, rng: random.Random) -> float:
        """Seconds to wait before retry number `retry` (from 1)."""
        ceiling = min(self.cap_seconds, self.base_seconds * 2 ** (retry - 1))
        drawn = rng.uniform(0.0, ceiling)
        return max(drawn, failure.retry_after or 0.0)


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a response asks for: `retry-after-ms`, else `retry-after` in seconds or as an
    HTTP date; None when absent or unreadable."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify(error: BaseException) -> Failure:
    """The `Failure` an exception of the openai client (or its JSON decoding) stands for."""
    import openai  # loaded with the first client (client.py says why)

    if isinstance(error, openai.APITimeoutError):
        return Failure("timeout", "the request timed out", retryable=True)
    if isinstance(error, openai.APIConnectionError):
        return Failure("connection_error", str(error) or "connection failed", retryable=True)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        wait = retry_after_seconds(error.response.headers)
        detail = f"HTTP {status}: {_short(error.message)}"
        if status == 429:
            return Failure("rate_limited", detail, retryable=True, retry_after=wait)
        if status >= 500:
            return Failure("server_error", detail, retryable=True, retry_after=wait)
        return Failure(f"http_{status}", detail, retryable=False)
    if isinstance(error, ValueError | openai.APIResponseValidationError):
        return Failure("malformed_response", _short(str(error)), retryable=False)
    raise error


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
