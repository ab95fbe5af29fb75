"""The LLM client over real HTTP (the real `openai` client against a scripted local server):
what is retried and how long it waits, what fails at once, and the backoff arithmetic."""

from __future__ import annotations

import asyncio
import random
import socket
import time

import pytest
from llm_server import Reply, ScriptedServer

from bigaction_assets.llm.client import CallError, ChatClient, ClientSettings
from bigaction_assets.llm.retry import Backoff, Failure, retry_after_seconds

MESSAGES = [{"role": "user", "content": "Say something."}]


def make_client(base_url: str, **settings) -> tuple[ChatClient, list[float]]:
    """A client whose waits are recorded, not slept: the tests check the waits themselves."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    defaults = {"model": "scripted", "base_url": base_url, "timeout_seconds": 5.0}
    client = ChatClient(ClientSettings(**{**defaults, **settings}), sleep=record)
    return client, waits


def complete(client: ChatClient):
    async def run():
        try:
            return await client.complete(MESSAGES)
        finally:
            await client.close()

    return asyncio.run(run())


def scripted(*replies: Reply):
    """Replies in order, then normal completions."""

    def script(request):
        return replies[request.number - 1] if request.number <= len(replies) else Reply()

    return script


def test_rate_limit_waits_at_least_retry_after_then_succeeds():
    limited = Reply(status=429, headers={"Retry-After": "7"})
    with ScriptedServer(scripted(limited, limited)) as server:
        client, waits = make_client(server.base_url)
        completion = complete(client)
    assert completion.text.startswith("I take this step")
    assert completion.requests == 3 and len(server.requests) == 3
    assert len(waits) == 2 and all(wait >= 7 for wait in waits)
    assert client.retries == {"rate_limited": 2}


def test_retry_after_ms_is_honoured_and_an_excessive_one_is_not_waited_for():
    with ScriptedServer(scripted(Reply(status=429, headers={"retry-after-ms": "1500"}))) as server:
        client, waits = make_client(server.base_url)
        complete(client)
    assert waits and waits[0] >= 1.5
    with ScriptedServer(scripted(Reply(status=429, headers={"Retry-After": "3600"}))) as server:
        client, waits = make_client(server.base_url)
        with pytest.raises(CallError) as raised:
            complete(client)
    assert raised.value.failure.reason == "rate_limited" and waits == []
    assert len(server.requests) == 1


def test_server_errors_are_retried_until_attempts_run_out():
    with ScriptedServer(lambda _request: Reply(status=503)) as server:
        client, waits = make_client(server.base_url, max_attempts=4)
        with pytest.raises(CallError) as raised:
            complete(client)
    assert raised.value.failure.reason == "server_error"
    assert len(server.requests) == 4 and raised.value.requests == 4 and len(waits) == 3
    with ScriptedServer(scripted(Reply(status=500))) as server:
        client, _ = make_client(server.base_url)
        assert complete(client).requests == 2


def test_a_timeout_is_retried():
    with ScriptedServer(scripted(Reply(hang=True))) as server:
        client, _ = make_client(server.base_url, timeout_seconds=0.3)
        completion = complete(client)
    assert completion.requests == 2 and client.retries == {"timeout": 1}


@pytest.mark.parametrize(("status", "reason"), [(400, "http_400"), (401, "http_401")])
def test_client_errors_fail_at_once(status, reason):
    with ScriptedServer(lambda _request: Reply(status=status)) as server:
        client, waits = make_client(server.base_url)
        with pytest.raises(CallError) as raised:
            complete(client)
    assert raised.value.failure.reason == reason and not raised.value.failure.retryable
    assert len(server.requests) == 1 and waits == []


@pytest.mark.parametrize("body", [b"not json", b'{"id": "x"}'])
def test_a_malformed_response_is_a_permanent_failure_of_the_request(body):
    with ScriptedServer(lambda _request: Reply(raw_body=body)) as server:
        client, _ = make_client(server.base_url)
        with pytest.raises(CallError) as raised:
            complete(client)
    assert raised.value.failure.reason == "malformed_response"
    assert len(server.requests) == 1


def test_connection_errors_are_retried():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client, waits = make_client(f"http://127.0.0.1:{port}/v1", max_attempts=3)
    with pytest.raises(CallError) as raised:
        complete(client)
    assert raised.value.failure.reason == "connection_error" and len(waits) == 2


def test_full_jitter_stays_under_the_doubling_ceiling_and_the_cap():
    backoff = Backoff(base_seconds=1.0, cap_seconds=8.0)
    rng = random.Random(0)
    transient = Failure("server_error", "", retryable=True)
    for retry, ceiling in [(1, 1), (2, 2), (3, 4), (4, 8), (7, 8)]:
        draws = [backoff.delay(retry, transient, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in draws)
        assert max(draws) > ceiling * 0.8 and min(draws) < ceiling * 0.2  # spread, not fixed
    limited = Failure("rate_limited", "", retryable=True, retry_after=20.0)
    assert all(backoff.delay(1, limited, rng) == 20.0 for _ in range(50))


def test_retry_after_header_forms():
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None
    now = time.time()
    date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(now + 30))
    assert 28 <= retry_after_seconds({"Retry-After": date}, now=now) <= 31
