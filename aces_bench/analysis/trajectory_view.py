"""A readable, bounded view of an ATIF trajectory for the HTML report.

Text is kept as plain strings (the templates escape it: it is untrusted agent output).
Long texts are split into a shown head and a ``rest`` revealed by ``<details>``; long
runs show their first and last steps with the middle folded, so a page stays light.
Both are bounded: a text shows at most ``EXCERPT_CHARS`` characters and a trajectory at
most ``MAX_STEPS_SHOWN`` steps, and the page says how much it left out and links to the
file (a 500 MB stdout must not become a 500 MB page). Secret-like strings and the
values of the credentials passed to the trial are masked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from harbor.models.trajectories import Step, Trajectory

from aces_bench.graders.redact import redact, redact_known
from aces_bench.reports.html import CallView, Clip, StepView, TrajectoryView

TEXT_HEAD = 600
STEPS_HEAD = 6
STEPS_TAIL = 4
EXCERPT_CHARS = 20_000  # of one text (a message, a command, an observation)
MAX_STEPS_SHOWN = 200  # of one trajectory; the rest are counted, not shown
_EDGE = 200  # how far a cut may move to a space, so no secret is cut in half at the edge


def _cut(text: str, at: int) -> int:
    """Where to cut ``text`` near ``at``: at a space within ``_EDGE`` before it, else at ``at``."""
    space = max(text.rfind(" ", at - _EDGE, at), text.rfind("\n", at - _EDGE, at))
    return space if space > 0 else at


def clip(text: str | None, limit: int = TEXT_HEAD, *, credentials: Mapping[str, str] | None = None,
         cap: int = EXCERPT_CHARS) -> Clip:
    """Split ``text`` into a head of ``limit`` chars and the rest, at most ``cap`` chars in all.

    The text is cut before it is masked (masking 500 MB would take minutes), at a space
    where one is near, so no secret is cut in half at the edge; then secret-like strings
    and the ``credentials`` values are masked.
    """
    text = text or ""
    omitted = 0
    if len(text) > cap:
        end = _cut(text, cap)
        omitted = len(text) - end
        text = text[:end]
    text = redact_known(redact(text), credentials or {})
    return Clip(head=text[:limit], rest=text[limit:], omitted=omitted)


def _text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text if getattr(p, "type", None) == "text" and p.text else f"[{p.type}]" for p in content)


def _step(step: Step, scope: str, creds: Mapping[str, str]) -> StepView:
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
        calls.append(CallView(call_id=call.tool_call_id, function=call.function_name,
                              arguments=clip(shown, credentials=creds),
                              output=clip(_text(result.content), credentials=creds) if result is not None else None))
    observations = [clip(_text(r.content), credentials=creds) for r in results if id(r) not in used]
    return StepView(
        step_id=step.step_id, source=step.source, scope=scope, message=clip(_text(step.message), credentials=creds),
        reasoning=clip(step.reasoning_content, credentials=creds) if step.reasoning_content else None,
        calls=calls, observations=observations,
    )


def _all_steps(traj: Trajectory, scope: str = "") -> list[tuple[Step, str]]:
    steps = [(s, scope) for s in traj.steps]
    for sub in traj.subagent_trajectories or []:
        steps += _all_steps(sub, f"{scope}{sub.trajectory_id or 'subagent'}/")
    return steps


def view(traj: Trajectory, credentials: Mapping[str, str] | None = None) -> TrajectoryView:
    """The trajectory as the skill page shows it (subagent steps included, scoped by id).

    At most ``MAX_STEPS_SHOWN`` steps are rendered (the first and the last); the rest
    are counted in ``steps_omitted``.
    """
    creds = credentials or {}
    raw = _all_steps(traj)
    n_calls = sum(len(s.tool_calls or []) for s, _ in raw)
    omitted = max(0, len(raw) - MAX_STEPS_SHOWN)
    if omitted:
        keep = MAX_STEPS_SHOWN - STEPS_TAIL
        raw = raw[:keep] + raw[-STEPS_TAIL:]
    steps = [_step(s, scope, creds) for s, scope in raw]
    if len(steps) <= STEPS_HEAD + STEPS_TAIL:
        head, folded, tail = steps, [], []
    else:
        head, folded, tail = steps[:STEPS_HEAD], steps[STEPS_HEAD:-STEPS_TAIL], steps[-STEPS_TAIL:]
    return TrajectoryView(agent=f"{traj.agent.name} {traj.agent.version}".strip(), schema_version=traj.schema_version,
                          n_steps=len(steps) + omitted, n_tool_calls=n_calls, head=head, folded=folded, tail=tail,
                          steps_omitted=omitted)
