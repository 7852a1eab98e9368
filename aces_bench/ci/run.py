"""One CI run: the study over the changed skills, the comparison, the policy, the packet."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from aces_bench.ci.changes import SkillChange
from aces_bench.ci.compare import SkillComparison, compare, load_baseline
from aces_bench.ci.outputs import case_table, junit, markdown, runtime_findings, sarif
from aces_bench.ci.policy import Check, Policy, Verdict, verdict
from aces_bench.ci.suggest import Suggestion, suggest
from aces_bench.io import write_json, write_text
from aces_bench.records import GradedTrial, read_grades, read_trials_table

PACKET = "packet"


@dataclass
class CiResult:
    verdict: Verdict
    packet: Path
    run_dir: Path


def _study(changed: list[SkillChange], overrides: list[str], run_dir: Path, controls: tuple[str, ...] = ()):
    from aces_bench.config.compose import compose_spec
    from aces_bench.pipeline import run_study

    paths = ",".join(str(c.path) for c in changed)
    spec = compose_spec(["skill=custom", f"skill.paths=[{paths}]", "study.name=ci", *controls, *overrides],
                        output_dir=run_dir)
    run_study(spec)
    return spec


def _checks(policy: Policy, trials: pd.DataFrame, summary, comparisons: list[SkillComparison],
            findings: list, skills: list[str], threshold: float) -> list[Check]:
    checks: list[Check] = []
    outcome = summary.headline_outcome
    if policy.min_outcome_lift_lower_bound is not None:
        bad, seen = [], 0
        for r in summary.by_skill:
            if r.outcome != outcome or r.group.get("skill") not in skills:
                continue
            seen += 1
            if r.ci_lo is None or r.ci_lo < policy.min_outcome_lift_lower_bound:
                bad.append(f"{r.group['skill']} {'no CI' if r.ci_lo is None else f'{r.ci_lo:+.3f}'}")
        checks.append(Check(name="outcome lift lower bound", status="fail" if bad or not seen else "pass",
                            reason=(f"{outcome} lift CI low end below {policy.min_outcome_lift_lower_bound:+.3f}: "
                                    + ", ".join(bad)) if bad else (f"every skill's {outcome} lift CI low end >= "
                                    f"{policy.min_outcome_lift_lower_bound:+.3f}" if seen else "no skill has a scored pair")))
    if policy.max_security_findings is not None:
        n = len(findings)
        checks.append(Check(name="runtime security findings", status="fail" if n > policy.max_security_findings else "pass",
                            reason=f"{n} finding(s) in with-skill trials (max {policy.max_security_findings}); see runtime.sarif"))
    if policy.null_arm == "require_no_effect":
        checks.append(null_arm_check(summary, outcome))
    if policy.no_regression:
        reg = [c for c in comparisons if c.status == "regressed"]
        unjudged = [c.skill for c in comparisons if c.status.startswith(("not judged", "no baseline"))]
        reason = ("regressed vs the last good run (paired CI below 0): " + ", ".join(
            f"{c.skill} {c.mean_diff:+.3f} [{c.ci_lo:+.3f}, {c.ci_hi:+.3f}]" for c in reg)) if reg else \
            "no skill is significantly worse than the last good run"
        if unjudged:
            reason += f" (not judged: {', '.join(unjudged)})"
        checks.append(Check(name="no regression", status="fail" if reg else "pass", reason=reason))
    if policy.min_pass_rate is not None:
        w = trials.loc[(trials["condition"] == "with_skill") & trials["skill"].isin(skills)]
        rate = float(((w["reward"] >= threshold) & (w["status"] == "ok")).mean()) if len(w) else None
        checks.append(Check(name="with-skill pass rate",
                            status="fail" if rate is None or rate < policy.min_pass_rate else "pass",
                            reason=f"{'n/a' if rate is None else f'{rate:.0%}'} of {len(w)} with-skill trials passed "
                                   f"(required {policy.min_pass_rate:.0%})"))
    return checks


def null_arm_check(summary, outcome: str) -> Check:
    """The policy's null-arm check, from the report's own null-arm rows (as the report gate decides)."""
    from aces_bench.reports.gate import NOT_RUN, null_arm_failures, null_arm_status

    if "null" not in summary.controls_run:
        return Check(name="null arm", status="not run", reason=NOT_RUN)
    failures = null_arm_failures(summary, outcome=outcome)
    if failures:
        return Check(name="null arm", status="fail", reason="; ".join(f.line().removeprefix("FAIL ") for f in failures))
    return Check(name="null arm", status="pass", reason=null_arm_status(summary, outcome=outcome).removeprefix("null arm: "))


def _suggestions(grades: list[GradedTrial], trials: pd.DataFrame, changed: list[SkillChange],
                 threshold: float) -> list[Suggestion]:
    """One suggestion per failing with-skill case, and per case with negative lift."""
    paths = {c.name: c.path for c in changed}
    w = {(g.skill, g.case_id): g for g in grades if g.condition == "with_skill"}
    base = trials.loc[trials["condition"] == "baseline"].groupby(["skill", "case_id"])["reward"].mean()
    out = []
    for (skill, case_id), g in sorted(w.items()):
        if skill not in paths:
            continue
        failed = g.status != "ok" or g.reward is None or g.reward < threshold
        b = base.get((skill, case_id))
        negative = g.reward is not None and b is not None and pd.notna(b) and g.reward < b
        if failed or negative:
            out.append(suggest(g, paths[skill], "failed" if failed else "negative lift"))
    return out


def _copy_trajectories(grades: list[GradedTrial], suggestions: list[Suggestion], packet: Path) -> int:
    wanted = {(s.skill, s.case_id) for s in suggestions}
    n = 0
    for g in grades:
        if (g.skill, g.case_id) not in wanted or not g.trial_dir:
            continue
        src = Path(g.trial_dir)
        dest = packet / "trajectories" / g.skill / g.case_id / f"{g.condition}-attempt{g.attempt}"
        for rel in ("agent/trajectory.json", "result.json"):
            if (src / rel).is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src / rel, dest / rel)
                n += 1
    return n


def _case_hashes(changed: list[SkillChange]) -> list[dict]:
    """Each case of the changed skills with the sha256 of its definition."""
    import hashlib

    from aces_bench.cases import load_suite

    out = []
    for c in changed:
        for case in load_suite(c.path, c.name).evals:
            digest = hashlib.sha256(case.model_dump_json().encode()).hexdigest()
            out.append({"skill": c.name, "case_id": case.id, "sha256": digest})
    return out


def run_ci(changed: list[SkillChange], overrides: list[str], out: Path, baseline_dir: Path, policy: Policy, *,
           since: str | None, commit: str, dirty: bool, suggest_judge=None) -> CiResult:
    from aces_bench import __version__
    from aces_bench.reports.summary import read_summary

    run_dir = out / "run"
    # A policy that requires the null arm gets one, unless the overrides choose the arms themselves.
    wants_null = policy.null_arm == "require_no_effect" and not any(o.startswith("study.controls") for o in overrides)
    spec = _study(changed, overrides, run_dir, ("study.controls=[null]",) if wants_null else ())
    trials = read_trials_table(run_dir)
    grades = read_grades(run_dir / "grades.jsonl")
    summary = read_summary(run_dir / "report" / "summary.json")
    skills = [c.name for c in changed]
    threshold = spec.grading.pass_threshold
    comparisons = compare(trials, load_baseline(baseline_dir), skills, summary.headline_outcome)
    findings = runtime_findings(grades)
    result = verdict(_checks(policy, trials, summary, comparisons, findings, skills, threshold))
    suggestions = _suggestions(grades, trials, changed, threshold)
    if suggest_judge is not None:
        from aces_bench.ci.suggest_model import with_model

        suggestions = with_model(suggest_judge, suggestions, {c.name: c.path for c in changed})

    packet = out / PACKET
    if packet.exists():
        shutil.rmtree(packet)
    packet.mkdir(parents=True)
    write_json(packet / "verdict.json", {"passed": result.passed, "checks": [c.model_dump() for c in result.checks],
                                         "comparisons": [c.model_dump() for c in comparisons],
                                         "policy": policy.model_dump()})
    write_json(packet / "suggestions.json", [s.model_dump() for s in suggestions])
    write_json(packet / "provenance.json", {
        "commit": commit, "dirty": dirty, "since": since, "aces_bench": __version__,
        "skills": [{"name": c.name, "path": str(c.path), "content_hash": c.content_hash, "why": c.reason}
                   for c in changed],
        "cases": _case_hashes(changed),
        "study_provenance": "run/provenance.json", "baseline": str(baseline_dir)})
    if (run_dir / "provenance.json").is_file():
        shutil.copyfile(run_dir / "provenance.json", packet / "study_provenance.json")
    shutil.copytree(run_dir / "report", packet / "report")
    _copy_trajectories(grades, suggestions, packet)
    cases = case_table(trials, threshold)
    write_text(packet / "junit.xml", junit(cases, comparisons, suggestions))
    write_text(packet / "runtime.sarif", sarif(findings, __version__))
    write_text(packet / "summary.md", markdown(result, changed, comparisons, suggestions, since))
    return CiResult(verdict=result, packet=packet, run_dir=run_dir)
