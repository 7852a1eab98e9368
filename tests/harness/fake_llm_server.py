"""A scripted OpenAI-compatible chat server on loopback, for driving LLM harnesses in tests.

It answers ``POST /v1/chat/completions`` (non-streaming) with whatever a *policy*
returns for the request body: a pure function of the messages, so concurrent
conversations (with-skill and baseline trials at once) never mix. Token usage is
reported from the text sizes, so harnesses record real, non-zero token counts.

The server is bounded: it binds 127.0.0.1 on a free port, answers at most
``max_requests`` completions (later ones get HTTP 400 with an error body, which a
harness reports as a failure rather than retrying forever), and stops itself when the
``with`` block ends or after ``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Policy = Callable[[dict[str, Any]], str]


def approx_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: one token per four characters, at least one."""
    return max(1, len(text) // 4)


def message_text(message: dict[str, Any]) -> str:
    """The text of one chat message, whether content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class ScriptedChatServer:
    """A loopback OpenAI-compatible server answering from ``policy`` (module doc)."""

    def __init__(self, policy: Policy, *, model: str = "test-model", max_requests: int = 50,
                 idle_timeout: float = 120.0):
        self.policy = policy
        self.model = model
        self.max_requests = max_requests
        self.idle_timeout = idle_timeout
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []  # the usage reported for each answered request
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._last_request = time.monotonic()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)
        self._watchdog = threading.Thread(target=self._watch_idle, name="scripted-llm-idle", daemon=True)
        self._stopped = threading.Event()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        self._watchdog.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _watch_idle(self) -> None:
        while not self._stopped.wait(1.0):
            if time.monotonic() - self._last_request > self.idle_timeout:
                # serve_forever runs in another thread, so shutdown() cannot deadlock here.
                self.stop()

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self._last_request = time.monotonic()
            if len(self.requests) >= self.max_requests:
                self.errors.append(f"request {len(self.requests) + 1} over the limit of {self.max_requests}")
                return 400, {"error": {"message": "scripted server: request limit reached",
                                       "type": "invalid_request_error", "code": "request_limit"}}
            self.requests.append(body)
            index = len(self.requests)
        try:
            reply = self.policy(body)
        except Exception as exc:  # noqa: BLE001 - the policy is test code: its bug becomes a server error
            self.errors.append(f"policy failed: {exc!r}")
            return 500, {"error": {"message": f"scripted policy failed: {exc!r}", "type": "server_error"}}
        prompt = "".join(message_text(m) for m in body.get("messages", []))
        usage = {"prompt_tokens": approx_tokens(prompt), "completion_tokens": approx_tokens(reply)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        with self._lock:
            self.usages.append({"request": index - 1, **usage})
        return 200, {
            "id": f"chatcmpl-scripted-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply}}],
            "usage": usage,
        }

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError as exc:
                    self._send(400, {"error": {"message": f"bad JSON: {exc}", "type": "invalid_request_error"}})
                    return
                if body.get("stream"):
                    self._send(400, {"error": {"message": "streaming is not scripted", "type": "invalid_request_error"}})
                    return
                self._send(*server._answer(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        return Handler
