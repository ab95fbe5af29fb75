"""The HTTP transport under the openai client: requests leave as they are made, connection
failures are told from timeouts, and replies are read strictly."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest
from llm_server import Reply, ScriptedServer

from bigaction_assets.llm import transport
from bigaction_assets.llm.client import CallError, ChatClient, ClientSettings, read_completion

MESSAGES = [{"role": "user", "content": "Say something."}]


def requests_seen_while_handling(workers: int) -> list[int]:
    """For each of `workers` calls made by handlers that all became ready at once and each
    block the loop for 50 ms: how many handlers had finished when the server read the call."""
    handled = 0
    seen: list[int] = []

    def script(request):
        if request.number > workers:  # the first round only opened the connections
            seen.append(handled)
        return Reply()

    async def run(server: ScriptedServer) -> None:
        nonlocal handled
        client = ChatClient(ClientSettings("scripted", server.base_url), connections=workers)
        ready = asyncio.Event()

        async def worker() -> None:
            nonlocal handled
            await client.complete(MESSAGES)
            await ready.wait()
            time.sleep(0.05)  # the handling of a reply, holding the loop (not the GIL)
            handled += 1
            await client.complete(MESSAGES)

        tasks = [asyncio.create_task(worker()) for _ in range(workers)]
        while server.answered < workers:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        ready.set()  # every worker wakes in the same turn of the loop
        try:
            await asyncio.gather(*tasks)
        finally:
            await client.close()

    with ScriptedServer(script) as server:
        asyncio.run(run(server))
    return seen


def test_each_request_leaves_when_its_handler_makes_it_not_after_all_ready_handlers():
    assert requests_seen_while_handling(3) == [1, 2, 3]


def test_without_the_eager_body_the_requests_wait_for_every_ready_handler(monkeypatch):
    """The failure the eager body prevents, shown with aiohttp's own request class."""
    monkeypatch.setattr(transport, "EagerBodyRequest", aiohttp.ClientRequest)
    assert requests_seen_while_handling(3) == [3, 3, 3]


@pytest.mark.parametrize("eager_limit", [1 << 20, 16])
def test_a_body_arrives_whole_written_at_once_or_past_the_limit_the_usual_way(
    monkeypatch, eager_limit
):
    monkeypatch.setattr(transport, "EAGER_BODY_BYTES", eager_limit)
    messages = [{"role": "user", "content": "é" * 5000 + " the end"}]

    async def run(server: ScriptedServer) -> str:
        client = ChatClient(ClientSettings("scripted", server.base_url), connections=2)
        try:
            return (await client.complete(messages)).text
        finally:
            await client.close()

    with ScriptedServer() as server:
        text = asyncio.run(run(server))
    assert server.requests[0].messages == messages and text.startswith("I take this step")


def complete_once(base_url: str) -> CallError:
    async def run() -> None:
        settings = ClientSettings("scripted", base_url, max_attempts=2, timeout_seconds=5.0)
        client = ChatClient(settings, sleep=lambda _seconds: asyncio.sleep(0))
        try:
            await client.complete(MESSAGES)
        finally:
            await client.close()

    with pytest.raises(CallError) as raised:
        asyncio.run(run())
    return raised.value


def test_a_server_that_hangs_up_is_a_connection_error_not_a_timeout():
    with ScriptedServer(lambda _request: Reply(drop=True)) as server:
        error = complete_once(server.base_url)
    assert error.failure.reason == "connection_error" and error.failure.retryable
    assert error.requests == 2 and len(server.requests) == 2


def completion_body(**fields) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": "I act."}}
    body = {"choices": [{**choice, "finish_reason": "stop"}], "usage": {}, **fields}
    return json.dumps(body).encode()


def test_a_reply_is_read_for_its_text_finish_reason_and_token_counts():
    usage = {"prompt_tokens": 12, "completion_tokens": 3}
    completion = read_completion(completion_body(usage=usage))
    assert (completion.text, completion.finish_reason) == ("I act.", "stop")
    assert (completion.prompt_tokens, completion.completion_tokens) == (12, 3)
    unreported = read_completion(completion_body(usage=None))
    assert unreported.prompt_tokens is None and unreported.completion_tokens is None
    empty = {"message": {"content": None}, "finish_reason": "length"}
    assert read_completion(completion_body(choices=[empty])).text == ""


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<html>busy</html>", "not JSON"),
        (b"[1, 2]", "no choices"),
        (completion_body(choices=[]), "no choices"),
        (completion_body(choices=[{"text": "legacy completion"}]), "no message text"),
        (completion_body(choices=[{"message": {"content": ["a", "b"]}}]), "no message text"),
        (completion_body(choices=[{"message": {"content": "x"}, "finish_reason": 1}]), "finish"),
        (completion_body(usage={"prompt_tokens": "12"}), "prompt_tokens"),
        (completion_body(usage={"completion_tokens": True}), "completion_tokens"),
        (completion_body(usage=[1]), "usage"),
    ],
)
def test_a_reply_of_another_shape_is_refused_with_its_reason(body, why):
    with pytest.raises(ValueError, match=why):
        read_completion(body)
