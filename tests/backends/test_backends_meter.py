"""The metering proxy on its own: forwards the three wire APIs unchanged (streamed too),
records the provider's usage per request, and records a dead endpoint as a failed call.

The proxy serves a plain loopback socket here (in a trial it is a socket in the
sandbox's namespace, tests/security/test_security_metering.py); the model is the
scripted server.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import aiohttp
from support.backends import sync
from support.model_server import ModelServer, say

from aces_bench.backends.meter import MeteringProxy
from aces_bench.core.metering import METER_FILE, MeteredCall, read_meter


def _socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


def _calls(trial: Path) -> list[MeteredCall]:
    return [MeteredCall.model_validate_json(x) for x in (trial / METER_FILE).read_text().splitlines()]


async def _post(url: str, body: dict) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.post(url, json=body) as resp:
        return resp.status, await resp.text()


@sync
async def test_streamed_and_plain_replies_pass_unchanged_and_are_metered(tmp_path):
    with ModelServer(lambda r: say("pong")) as model:
        sock = _socket()
        proxy = MeteringProxy(model.url, tmp_path)
        await proxy.start(sock)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        try:
            status, sse = await _post(base + "/v1/messages", {
                "model": "claude-sonnet-4-5", "stream": True, "max_tokens": 10, "tools": [{"name": "Bash"}],
                "messages": [{"role": "user", "content": "ping"}]})
            _, chat = await _post(base + "/v1/chat/completions", {
                "model": "gpt-4o", "messages": [{"role": "user", "content": "ping"}]})
        finally:
            await proxy.stop()
    assert status == 200 and "event: message_start" in sse and "pong" in sse
    assert json.loads(chat)["choices"][0]["message"]["content"] == "pong"
    calls = _calls(tmp_path)
    served = [r.usage for r in model.requests]
    assert [(c.path, c.input_tokens, c.output_tokens) for c in calls] == [
        ("/v1/messages", served[0]["prompt_tokens"], served[0]["completion_tokens"]),
        ("/v1/chat/completions", served[1]["prompt_tokens"], served[1]["completion_tokens"])]
    assert calls[0].listed == [] and calls[1].listed is None  # an agent call listing nothing; a tool-less call
    assert read_meter(tmp_path).calls == 2


@sync
async def test_an_unreachable_endpoint_is_a_502_and_a_recorded_failed_call(tmp_path):
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    port = dead.getsockname()[1]
    dead.close()  # nothing listens there now
    sock = _socket()
    proxy = MeteringProxy(f"http://127.0.0.1:{port}", tmp_path)
    await proxy.start(sock)
    try:
        status, text = await _post(f"http://127.0.0.1:{sock.getsockname()[1]}/v1/messages", {"model": "m"})
    finally:
        await proxy.stop()
    assert status == 502 and text.startswith("aces-bench metering proxy: model endpoint unreachable")
    [call] = _calls(tmp_path)
    assert call.status is None and call.error and not call.usage_reported
    assert read_meter(tmp_path).usage == []


@sync
async def test_a_proxy_style_request_for_another_host_still_goes_to_the_model_only(tmp_path):
    """A hostile client asking the proxy for an absolute URL (``GET http://other/...``, as
    to a forward proxy) reaches the configured model endpoint, never the host it named."""
    import asyncio

    with ModelServer(lambda r: say("pong")) as model, ModelServer(lambda r: say("leak")) as other:
        sock = _socket()
        proxy = MeteringProxy(model.url, tmp_path)
        await proxy.start(sock)
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", sock.getsockname()[1])
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
            writer.write(f"POST {other.url}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{other.port}\r\n"
                         f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
                         .encode() + body)
            await writer.drain()
            reply = (await reader.read()).decode()
            writer.close()
        finally:
            await proxy.stop()
    assert "pong" in reply and "leak" not in reply
    assert other.requests == [] and len(model.requests) == 1
