"""A readable, bounded view of an ATIF trajectory for the HTML report.

Text is kept as plain strings (the templates escape it: it is untrusted agent output).
Long texts are split into a shown head and a ``rest`` revealed by ``<details>``; long
runs show their first and last steps with the middle folded, so a page stays light
without hiding anything.
"""

from __future__ import annotations

import json

from harbor.models.trajectories import Step, Trajectory
from pydantic import BaseModel

from aces_bench.graders.redact import redact

TEXT_HEAD = 600
STEPS_HEAD = 6
STEPS_TAIL = 4


class Clip(BaseModel):
    head: str
    rest: str = ""

    @property
    def more(self) -> int:
        return len(self.rest)


class CallView(BaseModel):
    call_id: str
    function: str
    arguments: Clip
    output: Clip | None = None


class StepView(BaseModel):
    step_id: int
    source: str
    scope: str = ""
    message: Clip
    reasoning: Clip | None = None
    calls: list[CallView]
    observations: list[Clip]


class TrajectoryView(BaseModel):
    agent: str
    schema_version: str
    n_steps: int
    n_tool_calls: int
    head: list[StepView]
    folded: list[StepView]
    tail: list[StepView]


def clip(text: str | None, limit: int = TEXT_HEAD) -> Clip:
    """Split ``text`` (secret-like strings masked) into a head of ``limit`` chars and the rest."""
    text = redact(text or "")
    return Clip(head=text[:limit], rest=text[limit:])


def _text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text if getattr(p, "type", None) == "text" and p.text else f"[{p.type}]" for p in content)


def _step(step: Step, scope: str) -> StepView:
    results = step.observation.results if step.observation else []
    by_call = {r.source_call_id: r for r in results if r.source_call_id}
    calls, used = [], set()
    for call in step.tool_calls or []:
        args = call.arguments.get("command") if set(call.arguments) == {"command"} else None
        shown = args if isinstance(args, str) else json.dumps(call.arguments, ensure_ascii=False, indent=1, sort_keys=True)
        result = by_call.get(call.tool_call_id)
        if result is None and len(step.tool_calls or []) == 1 and len(results) == 1:
            result = results[0]
        if result is not None:
            used.add(id(result))
        calls.append(CallView(call_id=call.tool_call_id, function=call.function_name, arguments=clip(shown),
                              output=clip(_text(result.content)) if result is not None else None))
    observations = [clip(_text(r.content)) for r in results if id(r) not in used]
    return StepView(
        step_id=step.step_id, source=step.source, scope=scope, message=clip(_text(step.message)),
        reasoning=clip(step.reasoning_content) if step.reasoning_content else None,
        calls=calls, observations=observations,
    )


def _all_steps(traj: Trajectory, scope: str = "") -> list[StepView]:
    views = [_step(s, scope) for s in traj.steps]
    for sub in traj.subagent_trajectories or []:
        views += _all_steps(sub, f"{scope}{sub.trajectory_id or 'subagent'}/")
    return views


def view(traj: Trajectory) -> TrajectoryView:
    """The trajectory as the skill page shows it (subagent steps included, scoped by id)."""
    steps = _all_steps(traj)
    n_calls = sum(len(s.calls) for s in steps)
    if len(steps) <= STEPS_HEAD + STEPS_TAIL:
        head, folded, tail = steps, [], []
    else:
        head, folded, tail = steps[:STEPS_HEAD], steps[STEPS_HEAD:-STEPS_TAIL], steps[-STEPS_TAIL:]
    return TrajectoryView(agent=f"{traj.agent.name} {traj.agent.version}".strip(), schema_version=traj.schema_version,
                          n_steps=len(steps), n_tool_calls=n_calls, head=head, folded=folded, tail=tail)
