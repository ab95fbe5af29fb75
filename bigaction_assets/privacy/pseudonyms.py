"""Keyed pseudonyms (HMAC-SHA256) for the anonymous ids senders attach, so the raw ids never
reach the landing area, the lake or a release, and no one without the key can link them back."""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field

KEY_ENV = "BIGACTION_PSEUDONYM_KEY"
# For the demo and local development only: anyone can recompute pseudonyms made with it.
DEV_KEY = "bigaction-DEVELOPMENT-ONLY-pseudonym-key-not-secret"
MIN_KEY_CHARS = 16
PSEUDONYM_HEX = 32


class MissingKey(RuntimeError):
    """No pseudonym key in the environment and development mode was not asked for."""


@dataclass(frozen=True)
class Pseudonymizer:
    """Turns anonymous ids into pseudonyms with one secret key.

    Attributes:
        dev: True when the key is the public development key (data it makes is demo data).
    """

    key: bytes = field(repr=False)
    dev: bool = False

    @classmethod
    def from_env(cls, dev: bool = False) -> Pseudonymizer:
        """The key from `BIGACTION_PSEUDONYM_KEY`; the development key only when `dev`."""
        key = os.environ.get(KEY_ENV, "")
        if key:
            if len(key) < MIN_KEY_CHARS:
                raise MissingKey(f"{KEY_ENV} must hold at least {MIN_KEY_CHARS} characters")
            return cls(key.encode("utf-8"))
        if dev:
            return cls(DEV_KEY.encode("utf-8"), dev=True)
        raise MissingKey(
            f"set {KEY_ENV} to a long random secret (e.g. `python -c 'import secrets; "
            f"print(secrets.token_urlsafe(32))'`), or run in development mode with the "
            f"public development key (never for real users' data)"
        )

    def _digest(self, *parts: str) -> str:
        message = "\x00".join(parts).encode("utf-8", errors="surrogatepass")
        return hmac.digest(self.key, message, hashlib.sha256).hex()  # one-shot: 5x faster

    @property
    def key_id(self) -> str:
        """A short fingerprint of the key, so data made with different keys can be told apart."""
        return self._digest("key-id")[:8]

    def user(self, anonymous_id: str) -> str:
        """The pseudonym of a sender's anonymous id (what a forget request is matched on)."""
        return self._digest("user", anonymous_id)[:PSEUDONYM_HEX]

    def run(self, user_id: str, run_id: str) -> str:
        """The pseudonym of one run of one sender: the telemetry episode's id."""
        return self._digest("run", user_id, run_id)[:PSEUDONYM_HEX]

    def tag(self, scope: str, kind: str, value: str) -> str:
        """A placeholder tag for a scrubbed value, stable within `scope` (a run) only."""
        return self._digest("placeholder", scope, kind, value)[:8]
