"""What a judge is shown about one trial: the final answer, a compact trajectory and facts.

The trajectory rendering is compact and capped (long tool outputs are truncated and,
past the cap, middle steps are elided with a count) so one prompt stays within any
judge's context. ``Facts`` are derived deterministically from the *whole* trajectory
(not the capped rendering), so an elided step never hides a skill activation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from harbor.models.trajectories import Step, ToolCall, Trajectory

from aces_bench.cases import EvalCase
from aces_bench.core.metrics import GRADER_VERSION
from aces_bench.graders.base import GradingInput
from aces_bench.graders.skill_execution import FAILURE_MARKERS, norm_skill, provenance, script_invocations
from aces_bench.graders.skill_execution import activations as find_activations
from aces_bench.graders.tool_calls import TraceView, build_view
from aces_bench.judges.facts import Activation, Facts, ScriptRun
from aces_bench.judges.prompts import fence
from aces_bench.records.results import MetricResult

RENDER_CAP = 12_000
MESSAGE_CAP = 600
ARGS_CAP = 400
OUTPUT_CAP = 400


def text_of(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:  # list[ContentPart]
        parts.append(
            part.text if getattr(part, "type", None) == "text" else f"[{part.type}]"
        )
    return "\n".join(p for p in parts if p)


def clip(text: str, cap: int) -> str:
    text = text.strip()
    return (
        text if len(text) <= cap else f"{text[:cap]} ...[{len(text) - cap} more chars]"
    )


def all_steps(traj: Trajectory) -> Iterator[tuple[str, Step]]:
    """Every step, with a prefix naming the embedded subagent it belongs to ('' for the top)."""
    for step in traj.steps:
        yield "", step
    for sub in traj.subagent_trajectories or []:
        for prefix, step in all_steps(sub):
            yield f"{sub.trajectory_id or 'subagent'}/{prefix}", step


def final_answer(inp: GradingInput) -> tuple[str | None, str]:
    """The answer to judge and where it came from: the answer file, else the last agent message."""
    if inp.final_answer is not None and inp.final_answer.strip():
        return inp.final_answer, "answer file"
    if inp.trajectory is not None:
        for step in reversed(inp.trajectory.steps):
            text = text_of(step.message).strip()
            if step.source == "agent" and text:
                return text, f"last agent message (step {step.step_id})"
    return None, "none"


def _call_output(step: Step, call: ToolCall) -> str:
    if step.observation is None:
        return ""
    results = step.observation.results
    matched = [r for r in results if r.source_call_id == call.tool_call_id]
    if not matched and len(step.tool_calls or []) == 1:
        matched = [r for r in results if r.source_call_id is None]
    return "\n".join(text_of(r.content) for r in matched)


def render_step(prefix: str, step: Step) -> str:
    """One step as a few lines: who spoke, what was called, what came back (all clipped)."""
    lines = [
        f"[{prefix}step {step.step_id}] {step.source}: {clip(text_of(step.message), MESSAGE_CAP)}"
    ]
    for call in step.tool_calls or []:
        args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
        lines.append(f"  -> {call.function_name}({clip(args, ARGS_CAP)})")
        out = _call_output(step, call)
        if out:
            lines.append(f"  <- {clip(out, OUTPUT_CAP)}")
    if step.observation is not None and not step.tool_calls:
        out = "\n".join(text_of(r.content) for r in step.observation.results)
        if out:
            lines.append(f"  <- {clip(out, OUTPUT_CAP)}")
    return "\n".join(lines)


def render_trajectory(traj: Trajectory, cap: int = RENDER_CAP) -> str:
    """The trajectory within ``cap`` characters: whole if it fits, else head and tail steps
    with the number of elided steps in between (the end of a run matters as much as its start)."""
    blocks = [render_step(prefix, step) for prefix, step in all_steps(traj)]
    if sum(len(b) + 1 for b in blocks) <= cap:
        return "\n".join(blocks)
    head: list[str] = []
    tail: list[str] = []
    used, lo, hi = 0, 0, len(blocks) - 1
    budget = cap - 80  # room for the elision line
    while lo <= hi:
        take_head = len(head) <= len(tail)
        block = blocks[lo] if take_head else blocks[hi]
        if used + len(block) + 1 > budget:
            break
        used += len(block) + 1
        if take_head:
            head.append(block)
            lo += 1
        else:
            tail.append(block)
            hi -= 1
    omitted = hi - lo + 1
    return "\n".join(
        head
        + [f"... [{omitted} step(s) omitted to fit {cap} characters] ..."]
        + tail[::-1]
    )


def script_runs(view: TraceView, inp: GradingInput, case: EvalCase) -> list[ScriptRun]:
    """Runs of the case's expected script, as skill_execution finds them.

    The same shell reading as the deterministic grader: naming a script in ``test -f``
    or ``cat`` is not running it. A run's outcome is its exit status where the harness
    reports one, else the failure markers in its output.
    """
    assert case.expected_script
    skills = {norm_skill(s) for s in (case.expected_skill, *case.acceptable_skills) if s}
    runs = []
    absent = inp.target_skill if inp.condition == "baseline" and inp.target_skill not in inp.staged_skills else None
    for call, _ in script_invocations(view.calls, case.expected_script, skills, inp.skills_dir, absent=absent,
                                      provenance=provenance(inp)):
        if call.failed is None:
            bad = FAILURE_MARKERS.search(call.output)
            ok, detail = bad is None, (f"failure marker {bad.group(0)!r}" if bad else "no failure marker in output")
        else:
            ok = not call.failed
            detail = f"exit status {call.exit_code}" if call.exit_code is not None else f"{call.status_source}: failed={call.failed}"
        runs.append(ScriptRun(step=call.step_id, ok=ok, detail=detail))
    return runs


def build_facts(inp: GradingInput, case: EvalCase, answer_source: str) -> Facts:
    """Facts over the whole trajectory (subagents included).

    Activations and script runs are read exactly as skill_execution reads them
    (``graders.tool_calls`` view), so the judge and the deterministic grader never
    disagree about what the agent did.
    """
    activations: list[Activation] = []
    runs: list[ScriptRun] = []
    n_calls = 0
    if inp.trajectory is not None:
        view = build_view(inp.trajectory, inp.workdir)
        n_calls = len(view.calls)
        activations = [Activation(skill=a.skill, step=a.call.step_id, how=a.how)
                       for a in find_activations(view.calls, inp.skills_dir)]
        if case.expected_script:
            runs = script_runs(view, inp, case)
    return Facts(
        condition=inp.condition,
        expected_skill=case.expected_skill,
        acceptable_skills=list(case.acceptable_skills),
        expected_script=case.expected_script,
        expected_output=case.expected_output,
        checks=case.checks,
        activations=activations,
        script_runs=runs,
        tool_calls=n_calls,
        final_answer_source=answer_source,
    )


def case_text(case: EvalCase) -> str:
    """The case as the judge should know it (author-written, trusted)."""
    lines = [
        f"expected skill: {case.expected_skill or 'none (negative control: no skill should be used)'}"
    ]
    if case.acceptable_skills:
        lines.append(f"acceptable alternatives: {', '.join(case.acceptable_skills)}")
    if case.expected_script:
        lines.append(f"expected script: {case.expected_script}")
    if case.expected_output:
        lines.append(f"ground truth: {case.expected_output}")
    for a in case.assertions:
        lines.append(
            f"assertion: {a if isinstance(a, str) else a.model_dump_json(exclude_none=True)}"
        )
    return "\n".join(lines)


def answer_section(answer: str | None) -> str:
    """The final answer as an untrusted section, or a plain statement that there is none."""
    if answer is None:
        return "The agent produced no final answer."
    return fence("final_answer", answer, untrusted=True)


def unscored(metric: str, reason: str, grader: str, version: str) -> MetricResult:
    return MetricResult(
        metric=metric,
        score=None,
        unscored_reason=reason,
        grader=grader,
        grader_version=version,
    )


def precondition(
    inp: GradingInput, metric: str, grader: str, version: str
) -> MetricResult | None:
    """An unscored result when the trial cannot be judged at all, else None."""
    if inp.trajectory is None:
        cause = inp.trajectory_error or "no trajectory was found"
        return unscored(metric, f"no usable trajectory: {cause}", grader, version)
    if inp.case is None:
        return unscored(
            metric,
            "no case spec for this trial: the judged metrics need one",
            grader,
            version,
        )
    return None


def grader_version(prompt_version: str) -> str:
    """Grader version plus prompt version, so a score names the prompt that produced it."""
    return f"{GRADER_VERSION}+prompt.{prompt_version}"


def trial_sections(inp: GradingInput) -> str:
    """The shared body of judged prompts: task, case, final answer, trajectory, facts.

    Agent output (final answer, trajectory) is fenced as untrusted; the case is the
    author's and the facts are computed here.
    """
    assert inp.case is not None and inp.trajectory is not None
    answer, source = final_answer(inp)
    return "\n\n".join(
        [
            fence("task", inp.case.prompt),
            fence("case", case_text(inp.case)),
            answer_section(answer),
            fence("trajectory", render_trajectory(inp.trajectory), untrusted=True),
            fence("facts", build_facts(inp, inp.case, source).model_dump_json()),
        ]
    )
