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
from aces_bench.core.io import write_json, write_text
from aces_bench.core.text import printable
from aces_bench.records.study import KINDS
from aces_bench.records.trials import GradedTrial, read_grades, read_trials_table

PACKET = "packet"


@dataclass
class CiResult:
    verdict: Verdict
    packet: Path
    run_dir: Path


def _study(changed: list[SkillChange], overrides: list[str], run_dir: Path, controls: tuple[str, ...] = (),
           policy: Policy | None = None):
    from aces_bench.config.compose import compose_spec
    from aces_bench.study.entry import run_study

    paths = ",".join(str(c.path) for c in changed)
    base = ["skill=custom", f"skill.paths=[{paths}]", "study.name=ci", *controls]
    spec = compose_spec([*base, *overrides], output_dir=run_dir)
    if spec.study.sequential:
        spec = _sequential_spec(spec, base, overrides, run_dir, policy or Policy())
    run_study(spec)
    return spec


def _sequential_spec(spec, base: list[str], overrides: list[str], run_dir: Path, policy: Policy):
    """The study of a sequential ci run: its design gates at the policy's gate, fixed before the first trial.

    A sequential study decides each skill at its looks with the gate's settings
    (``study.gate``, Holm across its skills look by look unless the family is "none"), so
    ci runs it with the policy's: the verdict ci reads is the one the
    design stopped with. Refused: a policy the sequential decisions cannot answer
    (``min_outcome_lift_lower_bound``: a second threshold the design was not built for),
    and ``study.gate`` overrides that differ from the policy's gate."""
    from aces_bench.config.compose import compose_spec
    from aces_bench.core.errors import ConfigError

    if policy.min_outcome_lift_lower_bound is not None:
        raise ConfigError("aces-bench ci cannot gate a sequential study with min_outcome_lift_lower_bound: that "
                          "check re-gates at a second threshold, while each skill's sequential design stops at the "
                          "threshold it was built for", where="study.sequential",
                          fix="drop min_outcome_lift_lower_bound from the policy (gate.threshold sets the lift each "
                              "skill must credibly exceed), or drop study.sequential=true")
    gate = [f"study.gate.{key}={value}" for key, value in policy.gate.model_dump().items()]
    spec = compose_spec([*base, *gate, *overrides], output_dir=run_dir)
    if spec.study.gate != policy.gate:
        raise ConfigError("a sequential ci run gates at the policy's gate, and the study.gate overrides differ from "
                          "it", where="study.gate", fix="set the gate in the policy (gate: threshold, alpha, "
                          "min_cases, harm_alpha, null_alpha, family) and drop the study.gate overrides")
    return spec


def gate_check(policy: Policy, summary, skills: list[str]) -> tuple[Check, list]:
    """The gate over the skills this run changed: every one must read "helps" (first run included)."""
    from aces_bench.reports.gate import describe, family_text
    from aces_bench.stats.gate import gate_family

    threshold = policy.gate.threshold
    if policy.min_outcome_lift_lower_bound is not None:
        threshold = max(threshold, policy.min_outcome_lift_lower_bound)
    cases = [c for c in summary.gate_cases if c.skill in skills]
    settings = policy.gate.model_copy(update={"threshold": threshold})
    if summary.sequential:
        # A sequential study: the verdict is the one each skill's design stopped with at the
        # policy's gate (``_sequential_spec``), not the gate re-read on trials stopped early.
        verdicts = [v for v in summary.gate if v.skill in skills]
    else:
        verdicts = gate_family(cases, settings)  # the skills this run gates are the family
    bad = [v for v in verdicts if not v.passed]
    missing = sorted(set(skills) - {v.skill for v in verdicts})
    family = family_text(settings, verdicts)  # a sequential study applied the same family look by look
    rule = f"pass-rate lift credibly above {threshold:+.3f} ({family})"
    if bad or missing or not verdicts:
        reason = "; ".join([f"{v.skill}: {describe(v)}" for v in bad] + [f"{m}: no scored case" for m in missing])
        return Check(name="gate", status="fail", reason=reason or "no skill has a scored case"), verdicts
    if summary.sequential:
        rule += " (sequential: the verdict each skill's design stopped with, at its Holm level at each look)"
    return Check(name="gate", status="pass", reason=f"every skill helps: {rule}; " + "; ".join(
        f"{v.skill} p = {v.p_value:.4g} over {v.n_cases} case(s)" for v in verdicts)), verdicts


def pass_rates(trials: pd.DataFrame, skills: list[str]) -> dict[str, tuple[int, int]]:
    """Per skill: (with-skill trials passed, with-skill trials with a pass decided): final_pass,
    the one pass, with an arm's failures counted as failures; positive cases only."""
    from aces_bench.core.outcomes import FINAL_PASS
    from aces_bench.records.trials import is_negative_control
    from aces_bench.stats.pairing import outcome_values

    w = trials.loc[(trials["condition"] == "with_skill") & ~is_negative_control(trials)]
    out = {}
    for skill in skills:
        v = outcome_values(w.loc[w["skill"].astype(str) == skill], FINAL_PASS).dropna()
        out[skill] = (int(v.sum()), int(len(v)))
    return out


def _checks(policy: Policy, trials: pd.DataFrame, summary, comparisons: list[SkillComparison],
            findings: list, skills: list[str]) -> list[Check]:
    checks: list[Check] = [gate_check(policy, summary, skills)[0]]
    if policy.max_security_findings is not None:
        n = len(findings)
        checks.append(Check(name="runtime security findings", status="fail" if n > policy.max_security_findings else "pass",
                            reason=f"{n} finding(s) in with-skill trials (max {policy.max_security_findings}); see runtime.sarif"))
    if policy.null_arm == "require_no_effect":
        checks.append(null_arm_check(summary))
    if policy.no_regression and summary.sequential:
        checks.append(Check(name="no regression", status="not run", reason=(
            "a sequential study stops skills early, and the paired CI against the last good run is a fixed-design "
            "interval, not valid on those trials; the sequential gate above decided each skill")))
    elif policy.no_regression:
        reg = [c for c in comparisons if c.status == "regressed"]
        judged = [c for c in comparisons if not c.status.startswith(("not judged", "no baseline"))]
        unjudged = [c.skill for c in comparisons if c.status.startswith(("not judged", "no baseline"))]
        reason = ("regressed vs the last good run (paired CI below 0): " + ", ".join(
            f"{c.skill} {c.mean_diff:+.3f} [{c.ci_lo:+.3f}, {c.ci_hi:+.3f}]" for c in reg)) if reg else \
            "no skill is significantly worse than the last good run"
        if unjudged:
            reason += f" (no last good run to compare: {', '.join(unjudged)}; the gate judges them)"
        status = "fail" if reg else ("pass" if judged else "not run")
        checks.append(Check(name="no regression", status=status, reason=reason))
    if policy.min_pass_rate is not None:
        rates = pass_rates(trials, skills)
        low = [f"{s} {k}/{n}" for s, (k, n) in rates.items() if not n or k / n < policy.min_pass_rate]
        shown = ", ".join(f"{s} {k}/{n}" for s, (k, n) in rates.items())
        checks.append(Check(name="with-skill pass rate", status="fail" if low else "pass",
                            reason=(f"below {policy.min_pass_rate:.0%}: {', '.join(low)}" if low else
                                    f"every skill at or above {policy.min_pass_rate:.0%}") + f" (per skill: {shown})"))
    return checks


def null_arm_check(summary) -> Check:
    """The policy's null-arm check, as the report gate decides it (pooled and per skill)."""
    from aces_bench.analysis.gate import null_arm_failures, null_arm_status
    from aces_bench.reports.gate import NOT_RUN

    if "null" not in summary.controls_run:
        return Check(name="null arm", status="not run", reason=NOT_RUN)
    failures = [f.line().removeprefix("FAIL ") for f in null_arm_failures(summary)] + [
        f"{v.skill}: {v.reason}" for v in summary.gate if v.verdict == "null arm shows an effect"]
    if failures:
        return Check(name="null arm", status="fail", reason="; ".join(failures))
    return Check(name="null arm", status="pass", reason=null_arm_status(summary).removeprefix("null arm: "))


def _suggestions(grades: list[GradedTrial], trials: pd.DataFrame, changed: list[SkillChange]) -> list[Suggestion]:
    """One suggestion per failing with-skill case, per case with negative lift, and per
    should-not-use case the skill fired on (all read from the one pass, final_pass)."""
    from aces_bench.core.outcomes import FINAL_PASS
    from aces_bench.stats.pairing import outcome_values

    paths = {c.name: c.path for c in changed}
    w = {(g.skill, g.case_id): g for g in grades if g.condition == "with_skill"}
    b_rows = trials.loc[trials["condition"] == "baseline"]
    base = b_rows.assign(p=outcome_values(b_rows, FINAL_PASS)).groupby(["skill", "case_id"])["p"].mean()
    out = []
    for (skill, case_id), g in sorted(w.items()):
        if skill not in paths:
            continue
        failed = g.final_pass is False
        b = base.get((skill, case_id))
        negative = g.final_pass is not None and b is not None and pd.notna(b) and float(g.final_pass) < b
        if g.negative_control and g.activated:
            out.append(suggest(g, paths[skill], "fired on a should-not-use case"))
        elif failed or negative:
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
    from aces_bench.records.summary import read_summary

    run_dir = out / "run"
    # A policy that requires the null arm gets one, unless the overrides choose the arms themselves.
    wants_null = policy.null_arm == "require_no_effect" and not any(o.startswith("study.controls") for o in overrides)
    _study(changed, overrides, run_dir, ("study.controls=[null]",) if wants_null else (), policy)
    trials = read_trials_table(run_dir)
    grades = read_grades(run_dir / "grades.jsonl")
    summary = read_summary(run_dir / "report" / "summary.json")
    skills = [c.name for c in changed]
    comparisons = compare(trials, load_baseline(baseline_dir), skills, summary.headline_outcome)
    findings = runtime_findings(grades)
    result = verdict(_checks(policy, trials, summary, comparisons, findings, skills))
    suggestions = _suggestions(grades, trials, changed)
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
        "study_provenance": f"run/{KINDS['provenance'].file}", "baseline": str(baseline_dir)})
    if (run_dir / KINDS["provenance"].file).is_file():
        shutil.copyfile(run_dir / KINDS["provenance"].file, packet / "study_provenance.json")
    shutil.copytree(run_dir / "report", packet / "report")
    _copy_trajectories(grades, suggestions, packet)
    cases = case_table(trials)
    # Trial output reaches both texts: no control character in them (XML forbids most).
    write_text(packet / "junit.xml", printable(junit(cases, comparisons, suggestions)))
    write_text(packet / "runtime.sarif", sarif(findings, __version__))
    write_text(packet / "summary.md", printable(markdown(result, changed, comparisons, suggestions, since)))
    return CiResult(verdict=result, packet=packet, run_dir=run_dir)
