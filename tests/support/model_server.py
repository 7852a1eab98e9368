"""A scripted model server on loopback that speaks the three wire protocols real agents use.

- Anthropic Messages (``POST /v1/messages``, streamed as SSE or plain JSON): claude-code,
  opencode with an ``anthropic/...`` model.
- OpenAI Responses (``POST /v1/responses``, streamed as SSE): codex.
- OpenAI Chat Completions (``POST /v1/chat/completions``, plain or streamed): terminus-2
  through litellm, and any OpenAI-compatible client.

What the "model" does comes from a *script*: a function of the request (see
:class:`Request`) returning the next :class:`Step` (a tool call or a final text). A
script is a pure function of the conversation so far, like a model, so concurrent
conversations (a with-skill and a baseline trial at once) never mix. :class:`Replay`
turns a per-case list of steps into such a function: step *i* answers a request that
already carries *i* tool results.

Every request is recorded once (:attr:`ModelServer.requests`), with its protocol, path,
body and the usage the reply reported (``Request.usage``: ``prompt_tokens``,
``completion_tokens``, ``total_tokens``; empty until answered). Usage is counted from
text sizes, so agents record real, non-zero token counts. This is the project's one
scripted model server: agent CLIs, terminus-2 (``tests/support/terminus_policy.py``,
``tests/support/terminus_model.py``), the LLM judge and ``ci --suggest-model``
tests all drive it.
The server binds 127.0.0.1 only, answers at most ``max_requests`` (later ones get a 400
error body, which agents report instead of retrying forever) and stops at the end of
the ``with`` block or after ``idle_timeout`` seconds without a request.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

Protocol = Literal["anthropic", "responses", "chat"]


def approx_tokens(text: str) -> int:
    """A stable stand-in for a tokenizer: one token per four characters, at least one."""
    return max(1, len(text) // 4)


def _text(content: Any) -> str:
    """The text of a message content in any of the three protocols' shapes."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content"):
            if key in content:
                return _text(content[key])
    return ""


def message_text(message: dict[str, Any]) -> str:
    """The text of one chat message, whether its content is a string or a list of parts."""
    return _text(message.get("content"))


@dataclass(frozen=True)
class Step:
    """One model turn: call ``tool`` with ``args``, or (``tool`` None) answer ``text``."""

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def call(tool: str, **args: Any) -> Step:
    return Step(tool=tool, args=args)


def say(text: str) -> Step:
    return Step(text=text)


@dataclass(frozen=True)
class Request:
    """One recorded request, with protocol-independent accessors for scripts."""

    protocol: Protocol
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    # What the reply reported, filled in when it is sent (module doc); not part of equality.
    usage: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def system(self) -> str:
        b = self.body
        if self.protocol == "anthropic":
            return _text(b.get("system"))
        if self.protocol == "responses":
            sys_items = [i for i in b.get("input", []) if isinstance(i, dict) and i.get("role") in ("system", "developer")]
            return _text(b.get("instructions")) + "".join(_text(i.get("content")) for i in sys_items)
        return "".join(_text(m.get("content")) for m in b.get("messages", []) if m.get("role") == "system")

    @property
    def user_texts(self) -> list[str]:
        """Every user message's text, in order (tool results excluded)."""
        b = self.body
        if self.protocol == "responses":
            items = [i for i in b.get("input", []) if isinstance(i, dict) and i.get("role") == "user"]
            return [_text(i.get("content")) for i in items]
        out = []
        for m in b.get("messages", []):
            if m.get("role") != "user":
                continue
            content = m.get("content")
            if isinstance(content, list):
                content = [p for p in content if not (isinstance(p, dict) and p.get("type") == "tool_result")]
            text = _text(content)
            if text:
                out.append(text)
        return out

    @property
    def transcript(self) -> str:
        """System prompt, tool descriptions and every message's text: what a model sees."""
        tools = json.dumps(self.body.get("tools", []))
        return "\n".join([self.system, tools, *self.user_texts, *self.tool_results])

    @property
    def tools(self) -> list[str]:
        names = []
        for t in self.body.get("tools", []) or []:
            if isinstance(t, dict):
                names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type", ""))
        return names

    @property
    def tool_results(self) -> list[str]:
        """The outputs of the tool calls so far, in order."""
        b = self.body
        if self.protocol == "anthropic":
            return [_text(p.get("content")) for m in b.get("messages", []) if isinstance(m.get("content"), list)
                    for p in m["content"] if isinstance(p, dict) and p.get("type") == "tool_result"]
        if self.protocol == "responses":
            return [_text(i.get("output")) for i in b.get("input", [])
                    if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")]
        return [_text(m.get("content")) for m in b.get("messages", []) if m.get("role") == "tool"]

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


Script = Callable[[Request], Step]


class Replay:
    """A script that replays a per-case list of steps (module doc).

    ``choose(request)`` returns the steps for the conversation the request belongs to
    (for example by its task's prompt and whether a skill is offered); an entry may be
    a function of the request, for a step that depends on what really ran. A request
    past the end of its list gets ``final``; a request that offers no tools at all (an
    agent's side call: a title, a summary) gets ``side``.
    """

    def __init__(self, choose: Callable[[Request], Sequence[Step | Script]], *, final: str = "Done.",
                 side: str = "ok"):
        self.choose = choose
        self.final = final
        self.side = side

    def __call__(self, request: Request) -> Step:
        if not request.tools:
            return say(self.side)
        steps = self.choose(request)
        i = len(request.tool_results)
        if i >= len(steps):
            return say(self.final)
        step = steps[i]
        return step(request) if callable(step) else step


class ModelServer:
    """The loopback server (module doc). ``script`` decides each reply."""

    def __init__(self, script: Script, *, model: str = "test-model", max_requests: int = 100,
                 idle_timeout: float = 180.0):
        self.script = script
        self.model = model
        self.max_requests = max_requests
        self.idle_timeout = idle_timeout
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._last_request = time.monotonic()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="model-server", daemon=True)
        self._watchdog = threading.Thread(target=self._watch_idle, name="model-server-idle", daemon=True)
        self._stopped = threading.Event()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (Anthropic clients add ``/v1`` themselves)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (OpenAI clients)."""
        return f"{self.url}/v1"

    def by_protocol(self, protocol: Protocol) -> list[Request]:
        return [r for r in self.requests if r.protocol == protocol]

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
                self.stop()

    def _next(self, request: Request) -> tuple[int, Step | dict[str, Any]]:
        with self._lock:
            self._last_request = time.monotonic()
            if len(self.requests) >= self.max_requests:
                self.errors.append(f"request {len(self.requests) + 1} over the limit of {self.max_requests}")
                return 400, {"message": "scripted server: request limit reached"}
            self.requests.append(request)
        try:
            return 200, self.script(request)
        except Exception as exc:  # noqa: BLE001 - the script is test code: its bug becomes a server error
            self.errors.append(f"script failed on a {request.protocol} request: {exc!r}")
            return 500, {"message": f"scripted model failed: {exc!r}"}

    def _usage(self, request: Request, step: Step) -> tuple[int, int]:
        tin, tout = approx_tokens(request.transcript), approx_tokens(step.text or json.dumps(step.args))
        request.usage.update(prompt_tokens=tin, completion_tokens=tout, total_tokens=tin + tout)
        return tin, tout

    # -- Anthropic Messages -------------------------------------------------------
    def _anthropic(self, request: Request, step: Step) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
        n = next(self._ids)
        tin, tout = self._usage(request, step)
        if step.tool:
            block = {"type": "tool_use", "id": f"toolu_{n:06d}", "name": step.tool, "input": step.args}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.args)}
            start = {**block, "input": {}}
        else:
            block = {"type": "text", "text": step.text}
            delta = {"type": "text_delta", "text": step.text}
            start = {"type": "text", "text": ""}
        stop = "tool_use" if step.tool else "end_turn"
        message = {"id": f"msg_{n:06d}", "type": "message", "role": "assistant",
                   "model": request.body.get("model", self.model), "stop_sequence": None}
        full = {**message, "content": [block], "stop_reason": stop,
                "usage": {"input_tokens": tin, "output_tokens": tout}}
        events = [
            ("message_start", {"type": "message_start", "message": {
                **message, "content": [], "stop_reason": None, "usage": {"input_tokens": tin, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": tout}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return full, events

    # -- OpenAI Responses ---------------------------------------------------------
    def _responses(self, request: Request, step: Step) -> tuple[dict[str, Any], list[tuple[str, dict]]]:
        n = next(self._ids)
        tin, tout = self._usage(request, step)
        if step.tool:
            item = {"type": "function_call", "id": f"fc_{n:06d}", "call_id": f"call_{n:06d}", "name": step.tool,
                    "arguments": json.dumps(step.args), "status": "completed"}
        else:
            item = {"type": "message", "id": f"msg_{n:06d}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        base = {"id": f"resp_{n:06d}", "object": "response", "created_at": int(time.time()),
                "model": request.body.get("model", self.model)}
        usage = {"input_tokens": tin, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": tout,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": tin + tout}
        full = {**base, "status": "completed", "output": [item], "usage": usage}
        events = [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "status": "in_progress"}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": full}),
        ]
        return full, events

    # -- OpenAI Chat Completions --------------------------------------------------
    def _chat(self, request: Request, step: Step) -> tuple[dict[str, Any], list[tuple[str | None, dict]]]:
        n = next(self._ids)
        tin, tout = self._usage(request, step)
        usage = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
        base = {"id": f"chatcmpl-{n:06d}", "created": int(time.time()), "model": request.body.get("model", self.model)}
        if step.tool:
            calls = [{"index": 0, "id": f"call_{n:06d}", "type": "function",
                      "function": {"name": step.tool, "arguments": json.dumps(step.args)}}]
            message = {"role": "assistant", "content": None, "tool_calls": calls}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": step.text}
            finish = "stop"
        full = {**base, "object": "chat.completion", "usage": usage,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}]}
        chunk = {**base, "object": "chat.completion.chunk"}
        events = [
            (None, {**chunk, "choices": [{"index": 0, "delta": message, "finish_reason": None}]}),
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}),
        ]
        return full, events

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self
        routes: dict[str, Protocol] = {"/v1/messages": "anthropic", "/messages": "anthropic",
                                       "/v1/responses": "responses", "/responses": "responses",
                                       "/v1/chat/completions": "chat", "/chat/completions": "chat"}

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                # codex probes a WebSocket at GET /v1/responses and model lists: say no.
                self._json(404, {"error": {"message": f"no GET route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/")
                protocol = routes.get(path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if protocol is None:
                    self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError as exc:
                    self._json(400, {"error": {"message": f"bad JSON: {exc}", "type": "invalid_request_error"}})
                    return
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in ("user-agent", "anthropic-version")}
                request = Request(protocol, self.path, body, headers)
                status, step = server._next(request)
                if status != 200:
                    self._json(status, {"type": "error", "error": {"type": "invalid_request_error", **step}})
                    return
                full, events = getattr(server, f"_{protocol}")(request, step)
                if request.stream:
                    self._sse(events, done=protocol == "chat")
                else:
                    self._json(200, full)

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _sse(self, events: list[tuple[str | None, dict]], *, done: bool) -> None:
                parts = []
                for name, data in events:
                    head = f"event: {name}\n" if name else ""
                    parts.append(f"{head}data: {json.dumps(data)}\n\n")
                if done:
                    parts.append("data: [DONE]\n\n")
                payload = "".join(parts).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        return Handler
