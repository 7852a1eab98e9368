"""The metering point: a host-side HTTP proxy between one trial's sandbox and its model.

Under ``no-network`` a local sandbox reaches its model only through a socket the host
opens inside the trial's own network namespace (:mod:`aces_bench.backends.egress`). For
a plain-HTTP model endpoint (the loopback gateway or scripted server a study points
``model.base_url`` at) that socket is served by :class:`MeteringProxy` instead of a byte
relay: each request is forwarded from the host to the endpoint, the response is
streamed back unchanged, and one :class:`~aces_bench.core.metering.MeteredCall` is
appended to ``<trial dir>/model-meter.jsonl``: the tokens the *provider's* response
reported and the skills the request listed.

Why it cannot be steered from inside the sandbox:

- **Attribution** needs no token or header from the trial: the listening socket is
  created inside that trial's network namespace before the trial starts, so only that
  sandbox's processes can connect to it; another trial's sandbox has a namespace (and
  a proxy) of its own, and the host's loopback is a different namespace.
- **The record** is written by the host, in the trial dir itself, which no sandbox
  mount exposes (only its ``agent``/``verifier``/``artifacts`` subfolders are bound).
- **The tokens** come from the provider's answer, not from anything the CLI writes.

An ``https://`` endpoint stays a byte relay (TLS runs end to end between the agent and
the provider, so there is nothing to read): such a trial has no metering record and its
usage is the harness's own claim, reported as such.

Why a small aiohttp proxy rather than LiteLLM's: it must forward the three wire APIs
byte for byte (streamed SSE included) without translating them, run offline with no
config or database, and serve a socket created in another namespace; aiohttp (already a
dependency of Harbor and litellm) does all three in a few lines.
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import aiohttp
from aiohttp import web

from aces_bench.core.metering import MeteredCall, meter_path, metered_call

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 64 * 2**20
_MAX_PARSED_BYTES = 16 * 2**20  # of a non-streamed response; a stream keeps only its usage lines
_SHUTDOWN_SEC = 5.0
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                         "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding"})


class _ResponseTap:
    """What of a response the record needs: a JSON body whole (up to a cap), or the lines
    of an SSE stream that can carry usage or the model's name."""

    def __init__(self, streamed: bool):
        self.streamed = streamed
        self._pending = b""
        self._kept: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        if not self.streamed:
            if self._size < _MAX_PARSED_BYTES:
                self._kept.append(chunk[: _MAX_PARSED_BYTES - self._size])
                self._size += len(chunk)
            return
        lines = (self._pending + chunk).split(b"\n")
        self._pending = lines.pop()[-_MAX_PARSED_BYTES:]
        self._kept += [line for line in lines if b'"usage"' in line or b'"model"' in line]

    def text(self) -> str:
        return b"\n".join([*self._kept, self._pending]).decode("utf-8", "replace") if self.streamed \
            else b"".join(self._kept).decode("utf-8", "replace")


def _json_body(raw: bytes) -> dict | None:
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


class MeteringProxy:
    """Forwards one trial's model requests to ``upstream`` and records each (module doc)."""

    def __init__(self, upstream: str, trial_dir: Path):
        self.upstream = upstream.rstrip("/")
        self.record = meter_path(trial_dir)
        self.calls = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None

    async def start(self, sock: socket.socket) -> None:
        """Serve ``sock`` (already bound, in the trial's namespace); the record exists from
        here on, so a trial that never called its model is metered as zero calls."""
        self.record.parent.mkdir(parents=True, exist_ok=True)
        self.record.touch()
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=_SHUTDOWN_SEC)
        await self._runner.setup()
        self._session = aiohttp.ClientSession(auto_decompress=False,
                                              timeout=aiohttp.ClientTimeout(total=None, sock_connect=30))
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        """Stop serving; requests in flight get up to a few seconds to finish and be recorded."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _write(self, call: MeteredCall) -> None:
        self.calls += 1
        try:
            with open(self.record, "a", encoding="utf-8") as fh:
                fh.write(call.model_dump_json() + "\n")
        except OSError as exc:
            log.error("metering record %s not written: %s", self.record, exc)

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        headers["Accept-Encoding"] = "identity"  # the proxy reads the usage: no compressed bodies
        status: int | None = None
        error: str | None = None
        tap = _ResponseTap(streamed=False)
        try:
            assert self._session is not None
            async with self._session.request(request.method, self.upstream + request.path_qs, headers=headers,
                                             data=raw, allow_redirects=False) as upstream:
                status = upstream.status
                tap = _ResponseTap(streamed="text/event-stream" in upstream.headers.get("Content-Type", ""))
                reply = web.StreamResponse(status=upstream.status, headers={
                    k: v for k, v in upstream.headers.items() if k.lower() not in _HOP_BY_HOP - {"content-length"}})
                await reply.prepare(request)
                async for chunk in upstream.content.iter_any():
                    tap.feed(chunk)
                    await reply.write(chunk)
                await reply.write_eof()
                return reply
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
            if status is None:
                return web.Response(status=502, text=f"aces-bench metering proxy: model endpoint unreachable ({error})")
            raise
        finally:
            self._write(metered_call(method=request.method, path=request.path_qs, body=_json_body(raw),
                                     status=status, response=tap.text(), error=error))
