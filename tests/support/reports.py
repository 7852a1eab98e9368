"""A realistic synthetic study on disk, written through the project's own models.

Layout per member (as the pipeline writes it): ``trials.parquet``/``trials.csv``
(``TrialRow``), ``grades.jsonl`` (``GradedTrial`` fields, ``MetricResult`` per metric),
``provenance.json`` (``Provenance`` of a composed ``RunSpec``), ``tasks/<id>/instruction.md``
and ``jobs/<job>/<trial>/agent/trajectory.json`` (Harbor's ATIF ``Trajectory``).

Planted on purpose: failed and unscored trials, missing trajectories, one-sided pairs,
repeated attempts that disagree, a with-skill arm that never activated its skill, one
that activated it and still did worse, a with-skill arm that timed out but was graded,
a long observation (for "show more"), ``<script>alert(1)</script>`` in a trajectory, and
a with-skill trial whose script fails, which the agent patches and then passes (its
``self_correction`` section and ``first_attempt_pass`` come from the real graders).

Target skill folders are written under ``<root>/_skills/`` with SKILL.md files of
different quality (so their Tier 1 structural scores differ), and provenance.json
records their real content hashes, as a study run on them would.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from harbor.models.trajectories import (
    Agent,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)

from aces_bench.cases import EvalCase
from aces_bench.config.compose import compose_spec
from aces_bench.core.io import write_frame, write_json, write_text
from aces_bench.core.metrics import metric_names
from aces_bench.core.modes import ARM_FAILURES
from aces_bench.graders.base import GradingInput
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.self_correction import first_attempt_pass
from aces_bench.grading.labels import judge_label
from aces_bench.inputs.skills import hash_tree
from aces_bench.records.provenance import SkillProvenance
from aces_bench.records.results import Evidence, MetricResult
from aces_bench.records.trials import TrialRow, rows_to_frame
from aces_bench.study.provenance import build_provenance

PLANTED_SCRIPT = "<script>alert(1)</script>"
SKILLS = ("invoice-reconciler", "semver-bump", "access-log-latency")
CASES = (("explicit-1", "explicit"), ("implicit-1", "implicit"), ("contextual-1", "contextual"),
         ("negative-1", "negative"))
JUDGED = ("accuracy", "goal_accuracy", "behavior_check")
SKILLS_DIR = "_skills"
PASS_THRESHOLD = 1.0


@dataclass(frozen=True)
class MemberPlan:
    name: str
    overrides: tuple[str, ...]
    attempts: int
    base_level: float
    lift: float


MEMBERS = (
    MemberPlan("reference-isolation", ("harness=reference", "workspace=isolation"), 2, 0.40, 0.30),
    MemberPlan("reference-group", ("harness=reference", "workspace=group", "decoys=paper"), 1, 0.40, 0.20),
    MemberPlan("terminus-gpt4o", ("harness=terminus-2", "model=gpt-4o", "workspace=isolation"), 1, 0.45, 0.25),
    MemberPlan("terminus-sonnet", ("harness=terminus-2", "model=claude-sonnet", "workspace=isolation"), 1, 0.60, 0.12),
    MemberPlan("claude-code-sonnet", ("harness=claude-code", "model=claude-sonnet", "workspace=isolation", "backend=docker"), 1, 0.55, 0.20),
)


def _task_id(member: str, skill: str, case: str, condition: str) -> str:
    digest = hashlib.sha256(f"{member}|{skill}|{case}|{condition}".encode()).hexdigest()[:12]
    return f"{skill}-{case}-{condition}-{digest}"


def _result(call_id: str, output: str) -> ObservationResult:
    # The reference agent reports each command's exit status in the result's extra.
    code = 1 if "[exit code: 1]" in output else 0
    return ObservationResult(source_call_id=call_id, content=output, extra={"exit_code": code})


def trajectory(skill: str, *, activated: bool, script_ok: bool, plant: bool, long_output: bool, answer: str,
               patched: bool = False) -> Trajectory:
    """A reference-agent-style ATIF trajectory built with Harbor's models.

    ``patched``: the skill's script fails, the agent edits it and reruns it successfully.
    """
    steps = [Step(step_id=1, source="user", message=f"Use the data in /workspace/data to answer. ({skill})")]
    calls = [("ls /skills", "\n".join(SKILLS))]
    run = f"python3 /skills/{skill}/scripts/run.py data/input.csv"
    if activated:
        calls.append((f"cat /skills/{skill}/SKILL.md", f"---\nname: {skill}\n---\nRun scripts/run.py on the input."))
        if patched:
            calls.append((run, "Traceback (most recent call last):\nValueError: could not convert '12.5'\n[exit code: 1]"))
            calls.append((f"sed -i 's/int(/float(/' /skills/{skill}/scripts/run.py", "[exit code: 0]"))
            calls.append((run, "total: 1234.50\n[exit code: 0]"))
        else:
            out = "total: 1234.50\n[exit code: 0]" if script_ok else "Traceback (most recent call last):\nValueError\n[exit code: 1]"
            calls.append((run, out))
    else:
        calls.append(("grep -r total data/", "data/input.csv: total?\n[exit code: 0]"))
    if plant:
        calls.append(("cat data/notes.html", f"notes: {PLANTED_SCRIPT} & <b>bold</b>\n[exit code: 0]"))
    if long_output:
        calls.append(("cat data/big.log", "\n".join(f"line {i}: GET /api/v1/items 200 {i % 97} ms" for i in range(400))))
    for i, (command, output) in enumerate(calls, start=1):
        call = ToolCall(tool_call_id=f"call_{i}", function_name="bash", arguments={"command": command})
        steps.append(Step(step_id=len(steps) + 1, source="agent", message=f"Step {i}: running a command.",
                          tool_calls=[call], observation=Observation(results=[_result(f"call_{i}", output)]),
                          llm_call_count=0))
    steps.append(Step(step_id=len(steps) + 1, source="agent", message=answer, llm_call_count=0))
    return Trajectory(session_id=f"s-{skill}", agent=Agent(name="reference", version="1"), steps=steps)


def self_correction(traj: Trajectory, skill: str, case: str, kind: str, condition: str) -> MetricResult:
    """The real graders' self_correction result for this trajectory."""
    negative = kind == "negative"
    spec = EvalCase(id=case, kind=kind, prompt="Reconcile the data.", expected_skill=None if negative else skill,
                    expected_script=None if negative else "scripts/run.py")
    staged = (skill,) if condition == "with_skill" else ()
    inp = GradingInput(trajectory=traj, case=spec, condition=condition, target_skill=skill, allowed_skills=staged,
                       staged_skills=staged, skills_dir="/skills", workdir="/workspace")
    return grade_deterministic(inp)["self_correction"]


SKILL_DOCS = (
    # From thorough to sparse, so the structural scores differ.
    ("---\nname: {name}\ndescription: Use when you need to reconcile {name} records from CSV exports; computes "
    "totals and flags mismatches. Not for PDFs.\nversion: 1.0.0\nauthor: aces\ntags: [csv]\ntools: [bash]\n---\n"
    "# {name}\n\n## When to use\nUse this skill for CSV exports.\n\n## Instructions\n1. Run `python3 scripts/run.py "
    "data/input.csv`.\n2. Report the total.\n\n## Prerequisites\nPython 3.\n\n## Limitations\nCSV only.\n\n"
    "## Troubleshooting\nIf the script fails with an error, check the delimiter.\n"),
    ("---\nname: {name}\ndescription: Reconciles records and computes totals for {name} inputs.\n---\n# {name}\n\n"
    "## Instructions\nRun `python3 scripts/run.py data/input.csv` and report the total.\n"),
    ("---\nname: {name}\ndescription: Does stuff.\n---\nMaybe you could perhaps try running things. It is the best, "
    "most amazing tool ever.\n"),
)


def write_skill(root: Path, name: str, quality: int) -> Path:
    """A small real skill folder (SKILL.md + script); ``quality`` picks one of ``SKILL_DOCS``."""
    folder = root / name
    write_text(folder / "SKILL.md", SKILL_DOCS[quality % len(SKILL_DOCS)].format(name=name))
    write_text(folder / "scripts" / "run.py", "import sys\nprint(sum(float(x) for x in open(sys.argv[1]).read().split()))\n")
    return folder


def _metrics(rng: np.random.Generator, level: float, *, activated: bool, judge: str, condition: str) -> dict[str, MetricResult]:
    out = {}
    for m in metric_names():
        score = float(np.clip(rng.normal(level, 0.12), 0.0, 1.0).round(3))
        grader = "deterministic" if m in metric_names("deterministic") else judge.split(" ")[0]  # graders record the short label
        evidence = [Evidence(check="summary", passed=score >= 0.5, detail=f"{m} scored {score:.2f} ({condition})", step_id=2)]
        sub = {}
        if m == "skill_execution":
            sub = {"activation": 1.0 if activated else 0.0, "execution": 1.0 if activated else 0.0,
                   "workflow_order": 1.0, "error_recovery": None}
            evidence.insert(0, Evidence(check="activation", passed=activated,
                                        detail="read SKILL.md at step 3" if activated else "target SKILL.md never read"))
        if m in JUDGED:
            evidence.append(Evidence(check="behavior[0]" if m == "behavior_check" else "q1", passed=score >= 0.5,
                                     detail=f"judge reason: the answer {'matches' if score >= 0.5 else 'misses'} the ground truth"))
        out[m] = MetricResult(metric=m, score=score, sub_scores=sub, evidence=evidence, grader=grader)
    return out


def _plant(member: str, skill: str, case: str, attempt: int) -> str | None:
    """Which planted situation (if any) this paired case carries."""
    if member == "reference-isolation" and skill == SKILLS[0] and case == "implicit-1" and attempt == 0:
        return "never_discovered"
    if member == "reference-isolation" and skill == SKILLS[1] and case == "explicit-1":
        return "misused"
    if member == "reference-isolation" and skill == SKILLS[2] and case == "contextual-1":
        return "unstable_neg" if attempt == 0 else "unstable_pos"
    if member == "terminus-gpt4o" and skill == SKILLS[1] and case == "implicit-1":
        return "arm_failed"
    if member == "terminus-gpt4o" and skill == SKILLS[2] and case == "explicit-1":
        return "with_unscored"
    if member == "terminus-sonnet" and skill == SKILLS[0] and case == "explicit-1":
        return "infra_both"
    return None


def write_member(root: Path, plan: MemberPlan, *, seed: int = 0, skills: tuple[str, ...] = SKILLS,
                 cases: tuple[tuple[str, str], ...] = CASES) -> Path:
    out = root / plan.name
    spec = compose_spec(list(plan.overrides), output_dir=out)
    judge = judge_label(spec)
    rng = np.random.default_rng(seed)
    rows, grades = [], []
    for skill in skills:
        for case, kind in cases:
            for attempt in range(plan.attempts):
                planted = _plant(plan.name, skill, case, attempt)
                for condition in ("with_skill", "baseline"):
                    with_skill = condition == "with_skill"
                    task_id = _task_id(plan.name, skill, case, condition)
                    trial = f"{task_id[:24]}__{attempt}{condition[:1]}x"
                    visible = (1 if with_skill else 0) if spec.workspace.mode == "isolation" else (5 if with_skill else 4)
                    level = plan.base_level + (plan.lift if with_skill else 0.0)
                    activated = with_skill and kind != "negative"
                    status, cause = "ok", None
                    if planted == "never_discovered" and with_skill:
                        activated, level = False, 0.1
                    if planted in ("misused", "unstable_neg") and with_skill:
                        level = 0.1
                    if planted in ("misused", "unstable_neg", "never_discovered") and not with_skill:
                        level = 0.8
                    if planted == "unstable_pos" and with_skill:
                        level = 0.95  # passes in the end, after patching the skill
                    if planted == "arm_failed":
                        level = 0.15 if with_skill else 0.7
                        if with_skill:
                            status, cause = "timeout", "AgentTimeoutError: agent exceeded 300 s"
                    metrics = _metrics(rng, level, activated=activated, judge=judge, condition=condition)
                    has_traj = True
                    if (planted == "with_unscored" and with_skill) or planted == "infra_both":
                        status = "agent_error" if planted == "with_unscored" else "infra_error"
                        cause = ("NonZeroAgentExitCodeError: exit 1" if planted == "with_unscored"
                                 else "EnvironmentStartTimeoutError: sandbox did not start")
                        reason = f"trial did not run to completion ({status}): {cause}"
                        metrics = {m: MetricResult(metric=m, score=None, unscored_reason=reason, grader="none") for m in metric_names()}
                        has_traj = False
                    if plan.name == "terminus-sonnet" and case == "negative-1" and not with_skill:
                        has_traj = False  # an ok trial whose agent left no trajectory: graders cannot score it
                        metrics = {m: MetricResult(metric=m, score=None, grader="deterministic" if m in metric_names("deterministic") else judge,
                                                   unscored_reason="no trajectory.json in the trial dir")
                                   for m in metric_names()}
                    scored = [r.score for r in metrics.values() if r.score is not None]
                    composite = float(np.mean(scored)) if scored else None
                    reward = None if not scored else float(composite >= 0.5)
                    final_pass = None if reward is None else reward >= PASS_THRESHOLD
                    # Intention to treat: a finished trial's outcome is its judged score, an arm's
                    # failure scores 0 and does not pass, infrastructure is left out.
                    per_protocol = composite if status == "ok" else None
                    outcome = 0.0 if status in ARM_FAILURES else per_protocol
                    if status in ARM_FAILURES:
                        final_pass = False
                    trial_class = ("finished" if status == "ok" else
                                   "arm_failure" if status in ARM_FAILURES else "excluded")
                    trial_dir = out / "jobs" / "job-1" / trial
                    answer = "total: 1234.50" if level > 0.5 else "I could not find a total."
                    n_steps = n_calls = None
                    correction = first_pass = None
                    if has_traj:
                        traj = trajectory(skill, activated=activated, script_ok=planted != "misused",
                                          plant=(plan.name == "reference-isolation" and skill == SKILLS[0]
                                                 and case == "explicit-1" and with_skill and attempt == 0),
                                          long_output=(skill == SKILLS[1] and case == "contextual-1"), answer=answer,
                                          patched=planted == "unstable_pos" and with_skill)
                        if status == "ok":
                            correction = self_correction(traj, skill, case, kind, condition)
                            first_pass = first_attempt_pass(final_pass, correction, pass_threshold=1.0)
                        write_json(trial_dir / "agent" / "trajectory.json", traj.to_json_dict())
                        n_steps = len(traj.steps)
                        n_calls = sum(len(s.tool_calls or []) for s in traj.steps)
                    write_text(out / "tasks" / task_id / "instruction.md",
                               f"Reconcile the data for case {case}.\n\n---\nWorking directory: /workspace\n"
                               "Write your final answer to /workspace/answer.txt.\n")
                    wall = float(30 + 20 * visible + rng.normal(0, 3)) if status != "infra_error" else None
                    row = TrialRow(
                        run_id=plan.name, skill=skill, case_id=case, case_kind=kind, negative_control=kind == "negative",
                        harness=spec.harness.name, model=spec.model.display, workspace_mode=spec.workspace.mode,
                        decoy_set=spec.decoys.name, n_visible_skills=visible, condition=condition, attempt=attempt,
                        task_id=task_id, trial_name=trial, status=status, failure_cause=cause, reward=reward,
                        **{f"metric_{m}": metrics[m].score for m in metric_names()}, composite=composite,
                        outcome=outcome, outcome_per_protocol=per_protocol, outcome_source="judged",
                        trial_class=trial_class, grading_mode="aces_default",
                        first_attempt_pass=first_pass, final_pass=final_pass,
                        has_trajectory=has_traj, n_steps=n_steps, n_tool_calls=n_calls, wall_sec=wall,
                        agent_label=spec.harness.display, judge_label=judge, backend=spec.backend.display,
                        trial_dir=str(trial_dir),
                    )
                    rows.append(row)
                    grades.append({
                        "schema_version": "2", "task_id": task_id, "attempt": attempt, "skill": skill, "case_id": case,
                        "case_kind": kind, "negative_control": kind == "negative", "condition": condition,
                        "workspace_mode": spec.workspace.mode, "decoy_set": spec.decoys.name, "n_visible_skills": visible,
                        "status": status, "failure_cause": cause, "trial_name": trial, "trial_dir": str(trial_dir),
                        "reward": reward, "has_trajectory": has_traj,
                        "trajectory_error": None if has_traj else "no trajectory.json in the trial dir",
                        "metrics": {k: v.model_dump(mode="json") for k, v in metrics.items()}, "composite": composite,
                        "outcome": outcome, "outcome_per_protocol": per_protocol, "outcome_source": "judged",
                        "trial_class": trial_class, "grading_mode": "aces_default",
                        "first_attempt_pass": first_pass, "final_pass": final_pass,
                        "self_correction": correction.model_dump(mode="json") if correction is not None else None,
                        "n_steps": n_steps, "n_tool_calls": n_calls, "wall_sec": wall,
                        "final_answer": answer if status != "infra_error" else None,
                    })
    frame = rows_to_frame(rows)
    write_frame(out / "trials.parquet", frame)
    write_frame(out / "trials.csv", frame)
    write_text(out / "grades.jsonl", "\n".join(json.dumps(g) for g in grades) + "\n")
    folders = {s: root / SKILLS_DIR / s for s in skills}
    staged = [SkillProvenance(name=s, role="target", content_hash=hash_tree(folders[s]), path=str(folders[s]))
              for s in skills]
    write_json(out / "provenance.json", build_provenance(spec, staged, out / "jobs" / "job-1"))
    return out


def make_study(root: Path, members: tuple[MemberPlan, ...] = MEMBERS, *, skills: tuple[str, ...] = SKILLS,
               cases: tuple[tuple[str, str], ...] = CASES) -> Path:
    """A multirun dir at ``root`` with one study output dir per member; returns ``root``.

    ``skills`` must start with the three names the planted situations use (``SKILLS``).
    Their folders are written to ``root/_skills/`` (skill i gets ``SKILL_DOCS[i % 3]``).
    """
    for i, name in enumerate(skills):
        write_skill(root / SKILLS_DIR, name, i)
    for i, plan in enumerate(members):
        write_member(root, plan, seed=i, skills=skills, cases=cases)
    return root
