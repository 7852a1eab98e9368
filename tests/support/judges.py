"""Test support for the judge layer: ATIF builders, a scripted Judge, and a local
OpenAI-compatible server that plays scripted replies."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harbor.models.trajectories import Trajectory
from pydantic import BaseModel

from aces_bench.cases import EvalCase
from aces_bench.graders.base import GradingInput
from aces_bench.judges.base import JudgeOutcome

# --- ATIF builders ------------------------------------------------------------------------


def agent_step(
    step_id: int, message: str, calls: list[tuple[str, dict, str]] | None = None
) -> dict:
    """An agent step; each call is (function_name, arguments, output)."""
    step: dict[str, Any] = {"step_id": step_id, "source": "agent", "message": message}
    if calls:
        step["tool_calls"] = [
            {"tool_call_id": f"c{step_id}.{i}", "function_name": fn, "arguments": args}
            for i, (fn, args, _) in enumerate(calls)
        ]
        step["observation"] = {
            "results": [
                {"source_call_id": f"c{step_id}.{i}", "content": out}
                for i, (_, _, out) in enumerate(calls)
            ]
        }
    return step


def trajectory(
    prompt: str, *agent_steps: tuple[str, list[tuple[str, dict, str]] | None]
) -> Trajectory:
    steps = [{"step_id": 1, "source": "user", "message": prompt}]
    for i, (message, calls) in enumerate(agent_steps, start=2):
        steps.append(agent_step(i, message, calls))
    return Trajectory.model_validate(
        {
            "schema_version": "ATIF-v1.6",
            "agent": {"name": "reference", "version": "1"},
            "steps": steps,
        }
    )


def bash(command: str, output: str) -> tuple[str, dict, str]:
    return ("bash", {"command": command}, output)


INVOICE_CASE = EvalCase.model_validate(
    {
        "id": "explicit-1",
        "kind": "explicit",
        "prompt": "Reconcile data/march.csv and report the total unmatched amount.",
        "expected_output": "The total unmatched amount is 1234.50",
        "expected_skill": "invoice-reconciler",
        "expected_script": "scripts/reconcile.py",
        "assertions": [{"kind": "number", "value": 1234.5, "tolerance": 0.01}],
        "expected_behavior": ["runs scripts/reconcile.py on the staged file"],
    }
)


def good_run() -> Trajectory:
    return trajectory(
        INVOICE_CASE.prompt,
        (
            "I will read the skill.",
            [
                bash(
                    "cat /skills/invoice-reconciler/SKILL.md",
                    "---\nname: invoice-reconciler\n---\n# Invoice reconciler\nRun scripts/reconcile.py on the ledger.",
                )
            ],
        ),
        (
            "Running the reconciler.",
            [
                bash(
                    "python3 /skills/invoice-reconciler/scripts/reconcile.py data/march.csv",
                    "unmatched total: 1234.50\nexit code: 0",
                )
            ],
        ),
        ("The total unmatched amount is 1234.50 across 3 invoices.", None),
    )


def bad_run() -> Trajectory:
    return trajectory(
        INVOICE_CASE.prompt,
        ("Let me look.", [bash("head data/march.csv", "id,amount\n1,10")]),
        ("The total unmatched amount is 99.", None),
    )


def grading_input(
    traj: Trajectory | None, case: EvalCase | None = INVOICE_CASE, **kw: Any
) -> GradingInput:
    return GradingInput(
        trajectory=traj,
        case=case,
        condition=kw.pop("condition", "with_skill"),
        target_skill="invoice-reconciler",
        allowed_skills=("invoice-reconciler",),
        **{"skills_dir": "/skills", "workdir": "/workspace", **kw},
    )


# --- a scripted Judge ----------------------------------------------------------------------


class ScriptedJudge:
    """A Judge whose replies are given per prompt id: a dict for the schema, or an error string."""

    kind = "llm"

    def __init__(self, replies: dict[str, Any], label: str = "scripted:test"):
        self.replies = replies
        self.label = label
        self.asked: list[dict[str, str]] = []

    async def ask(self, *, prompt_id, prompt_version, system, user, schema):
        self.asked.append(
            {
                "prompt_id": prompt_id,
                "prompt_version": prompt_version,
                "system": system,
                "user": user,
            }
        )
        reply = self.replies[prompt_id]
        if callable(reply):
            reply = reply(user)
        if isinstance(reply, str):
            return JudgeOutcome[schema](value=None, error=reply, judge=self.label)
        return JudgeOutcome[schema](
            value=schema.model_validate(reply), judge=self.label
        )


def yes(reason: str = "seen") -> dict:
    return {"answer": "yes", "reason": reason}


def no(reason: str = "not seen") -> dict:
    return {"answer": "no", "reason": reason}


# --- a local OpenAI-compatible server --------------------------------------------------------


@dataclass
class Reply:
    content: str
    delay: float = 0.0
    status: int = 200


def completion(content: str) -> dict:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "test-judge",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@dataclass
class ScriptedServer:
    """Plays ``script`` replies in arrival order, or asks ``responder(body)`` when set.

    Records every request body, its arrival time and the peak number in flight. An
    exhausted script answers 500 so a test sees the surplus call instead of hanging.
    """

    script: deque[Reply] = field(default_factory=deque)
    responder: Callable[[dict], Reply] | None = None
    requests: list[dict] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def next_reply(self, body: dict) -> Reply:
        if self.responder is not None:
            return self.responder(body)
        with self.lock:
            return (
                self.script.popleft()
                if self.script
                else Reply("script exhausted", status=500)
            )


MAX_DELAY = 5.0  # bounds any scripted slowness, so a test cannot hang the server


def start_server(
    state: ScriptedServer, lifetime: float = 120.0
) -> tuple[ThreadingHTTPServer, str]:
    """Serve on 127.0.0.1 (free port) in a daemon thread; it shuts itself down after ``lifetime``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            with state.lock:
                state.requests.append(body)
                state.headers.append({k.lower(): v for k, v in self.headers.items()})
                state.arrivals.append(time.monotonic())
                state.in_flight += 1
                state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
            try:
                reply = state.next_reply(body)
                time.sleep(min(reply.delay, MAX_DELAY))
                if reply.status == 200:
                    payload = json.dumps(completion(reply.content)).encode()
                else:
                    payload = json.dumps(
                        {
                            "error": {
                                "message": reply.content,
                                "type": "test_error",
                                "code": reply.status,
                            }
                        }
                    ).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer
            finally:
                with state.lock:
                    state.in_flight -= 1

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    timer = threading.Timer(lifetime, server.shutdown)
    timer.daemon = True
    timer.start()
    server.timer = timer  # type: ignore[attr-defined]
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def as_json(model: BaseModel | dict) -> str:
    return json.dumps(model.model_dump() if isinstance(model, BaseModel) else model)
