"""Record the reference agent's actions as an ATIF trajectory with Harbor's models.

Conventions (docs/architecture.md): step 1 is the user instruction; each action is
one agent step with a single ``bash`` tool call ``{"command": ...}`` and an
observation whose content is the command's stdout, stderr and exit code; the last
step is the answer. Every agent step has ``llm_call_count=0`` (ATIF-v1.7's marker of
a deterministic, non-LLM dispatch). Ids are sequential (``call_1``, ...), so two runs
on the same inputs differ only in timestamps, and not even there in deterministic
mode.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from harbor.models.trajectories import (
    Agent,
    FinalMetrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)

from aces_bench.core.masking import mask_known

ATIF_SCHEMA_VERSION = Trajectory.model_fields["schema_version"].default
BASH_TOOL = "bash"
# Long outputs are cut so one chatty script cannot bloat every trajectory.
MAX_OBSERVATION_CHARS = 100_000
BASH_TOOL_DEFINITION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": BASH_TOOL,
        "description": "Run a shell command in the task environment.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command to run."}},
            "required": ["command"],
        },
    },
}


def format_observation(stdout: str | None, stderr: str | None, exit_code: int | None) -> str:
    """Command output as the observation shows it: stdout, stderr, then the exit code."""
    parts = [text.rstrip("\n") for text in (stdout, stderr) if text and text.strip()]
    body = "\n".join(parts)
    if len(body) > MAX_OBSERVATION_CHARS:
        cut = len(body) - MAX_OBSERVATION_CHARS
        body = body[:MAX_OBSERVATION_CHARS] + f"\n[... {cut} characters cut]"
    code = "none (the command did not finish)" if exit_code is None else str(exit_code)
    return f"{body}\n[exit code: {code}]" if body else f"[exit code: {code}]"


def utc_now() -> str:
    """The current time as an ISO 8601 UTC timestamp."""
    return datetime.now(UTC).isoformat()


# What one command's stdout (and, apart, its stderr) may put in the trajectory: a script
# that floods 500 MB must not become a 500 MB trajectory and report page. The reference
# agent cuts the stream in the sandbox already (``capped_command``); this is the backstop.
OUTPUT_CAP = 64 * 1024  # an answer copied from it must fit one argv string (128 KiB)


def cap_output(text: str | None, cap: int = OUTPUT_CAP) -> str | None:
    """``text`` cut to its first three quarters and last quarter of ``cap`` characters,
    saying how many were left out between them."""
    if text is None or len(text) <= cap:
        return text
    head, tail = cap - cap // 4, cap // 4
    return (text[:head] + f"\n[aces-bench: output cut: {len(text) - cap:,} characters in the middle not kept]\n"
            + text[-tail:])


def capped_command(command: str, cap: int = OUTPUT_CAP) -> str:
    """``command`` wrapped for ``bash -c`` so at most ``cap`` bytes of its stdout and of its
    stderr leave the sandbox: the first three quarters and the last quarter (a script's
    result line is usually its last), with a line saying the middle was dropped. The rest
    is read and discarded (the command never sees a broken pipe); the exit status is the
    command's own.
    """
    head, tail = cap - cap // 4, cap // 4
    cut = (f"__aces_cap() {{ head -c {head}; __c=; if IFS= read -r -d '' -n 1 __c || [ -n \"$__c\" ]; then "
           f"printf '\\n[aces-bench: output cut: the first {head} bytes above, the middle dropped, "
           f"the last {tail} bytes below]\\n'; {{ printf '%s' \"$__c\"; cat; }} | tail -c {tail}; fi; }}")
    return f"{cut}{_OPEN}{command}{_CLOSE}"


_OPEN = "\n{ ( "
_CLOSE = ("\n) 2>&1 1>&3 3>&- | __aces_cap 1>&2 3>&-; exit \"${PIPESTATUS[0]}\"; } 3>&1 "
          "| __aces_cap; exit \"${PIPESTATUS[0]}\"")


def original_command(wrapped: str) -> str:
    """The command ``capped_command`` wrapped (``wrapped`` itself when it is not one)."""
    if wrapped.startswith("__aces_cap() {") and wrapped.endswith(_CLOSE) and _OPEN in wrapped:
        return wrapped[wrapped.index(_OPEN) + len(_OPEN):-len(_CLOSE)]
    return wrapped


class TrajectoryRecorder:
    """Accumulates steps; ``trajectory()`` validates them into Harbor's model."""

    def __init__(
        self,
        agent: Agent,
        *,
        session_id: str | None = None,
        clock: Callable[[], str] | None = utc_now,
    ):
        self._agent = agent
        self._session_id = session_id
        self._clock = clock
        self._steps: list[Step] = []
        self._calls = 0
        self.extra: dict[str, Any] = {}
        self.credentials: dict[str, str] = {}
        """Values passed to the trial as credentials (name -> value): masked in what is written."""

    @property
    def steps(self) -> list[Step]:
        return list(self._steps)

    def _stamp(self) -> str | None:
        return self._clock() if self._clock is not None else None

    def user(self, message: str) -> None:
        self._steps.append(Step(step_id=len(self._steps) + 1, timestamp=self._stamp(), source="user", message=message))

    def action(
        self,
        message: str,
        command: str,
        *,
        stdout: str | None,
        stderr: str | None,
        exit_code: int | None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """One bash call and its observed result (each stream kept to ``OUTPUT_CAP`` bytes)."""
        stdout, stderr = cap_output(stdout), cap_output(stderr)
        self._calls += 1
        call_id = f"call_{self._calls}"
        self._steps.append(
            Step(
                step_id=len(self._steps) + 1,
                timestamp=self._stamp(),
                source="agent",
                message=message,
                tool_calls=[ToolCall(tool_call_id=call_id, function_name=BASH_TOOL, arguments={"command": command})],
                observation=Observation(
                    results=[
                        ObservationResult(
                            source_call_id=call_id,
                            content=format_observation(stdout, stderr, exit_code),
                            extra={"exit_code": exit_code},
                        )
                    ]
                ),
                llm_call_count=0,
                extra=extra,
            )
        )

    def final(self, answer: str, extra: dict[str, Any] | None = None) -> None:
        self._steps.append(
            Step(
                step_id=len(self._steps) + 1,
                timestamp=self._stamp(),
                source="agent",
                message=answer,
                llm_call_count=0,
                extra=extra,
            )
        )

    def trajectory(self) -> Trajectory:
        """The trajectory so far, with zero tokens and cost (no model was called).

        The value of every credential passed to the trial is masked, by name, wherever
        it appears (a command, its output, the answer).
        """
        traj = Trajectory(
            schema_version=ATIF_SCHEMA_VERSION,
            session_id=self._session_id,
            agent=self._agent,
            steps=self.steps,
            final_metrics=FinalMetrics(
                total_prompt_tokens=0,
                total_completion_tokens=0,
                total_cached_tokens=0,
                total_cost_usd=0.0,
                total_steps=len(self._steps),
            ),
            extra=dict(self.extra) or None,
        )
        if not any(self.credentials.values()):
            return traj
        return Trajectory.model_validate(_mask(traj.model_dump(mode="json"), self.credentials))


def _mask(obj: Any, values: dict[str, str]) -> Any:
    """Every string in a JSON value with each credential's value masked by name (``aces_bench.core.masking``)."""
    if isinstance(obj, str):
        return mask_known(obj, values)
    if isinstance(obj, dict):
        return {k: _mask(v, values) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask(v, values) for v in obj]
    return obj
