"""What ``aces-bench ci`` writes for machines and reviewers: JUnit XML (one test per
case), SARIF 2.1.0 for runtime security findings, and a Markdown job summary."""

from __future__ import annotations

import json
from collections.abc import Sequence
from xml.etree import ElementTree as ET

import pandas as pd

from aces_bench.ci.compare import CASE, SkillComparison
from aces_bench.ci.policy import Verdict
from aces_bench.ci.suggest import Suggestion
from aces_bench.records.trials import GradedTrial

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def case_table(trials: pd.DataFrame) -> pd.DataFrame:
    """Per case key and condition: trials, decided, passed (final_pass, the one pass: an
    arm's failures count as not passed; excluded trials are undecided)."""
    from aces_bench.core.outcomes import FINAL_PASS
    from aces_bench.stats.pairing import outcome_values

    p = outcome_values(trials, FINAL_PASS)
    t = trials.assign(passed=p.fillna(0.0).astype(bool), scored=p.notna())
    g = t.groupby([*CASE, "condition"], dropna=False).agg(n=("passed", "size"), n_scored=("scored", "sum"),
                                                           n_passed=("passed", "sum"), mean=("reward", "mean"))
    return g.reset_index()


def junit(cases: pd.DataFrame, comparisons: Sequence[SkillComparison], suggestions: Sequence[Suggestion]) -> str:
    """One <testcase> per with-skill case: fails when a with-skill attempt did not pass,
    or the case is worse than the last good run in a skill judged regressed."""
    regressed = {c.skill: set(c.worse_cases) for c in comparisons if c.status == "regressed"}
    hints = {(s.skill, s.case_id): s for s in suggestions}
    w = cases.loc[cases["condition"] == "with_skill"]
    suite = ET.Element("testsuite", name="aces-bench ci", tests=str(len(w)))
    failures = errors = 0
    for _, r in w.iterrows():
        name = f"{r['case_id']} [{r['harness']} / {r['model']} / {r['workspace_mode']} / {r['decoy_set']}]"
        tc = ET.SubElement(suite, "testcase", classname=str(r["skill"]), name=name)
        why = []
        if r["n_scored"] < r["n"]:
            errors += 1
            ET.SubElement(tc, "error", message=f"{int(r['n'] - r['n_scored'])} of {int(r['n'])} attempt(s) undecided "
                          "(excluded: infrastructure after retries, never run, or no grader could decide)")
            continue
        if r["n_passed"] < r["n"]:
            why.append(f"{int(r['n_passed'])} of {int(r['n'])} with-skill attempt(s) passed")
        if str(r["case_id"]) in regressed.get(str(r["skill"]), set()):
            why.append("worse than the last good run (the skill regressed by its paired interval)")
        if why:
            failures += 1
            s = hints.get((str(r["skill"]), str(r["case_id"])))
            body = "\n".join(f"LV1 {i.metric}.{i.check} (step {i.step_id}): {i.detail}" for i in s.lv1) if s else ""
            ET.SubElement(tc, "failure", message="; ".join(why)).text = body
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def runtime_findings(grades: Sequence[GradedTrial]) -> list[tuple[GradedTrial, object]]:
    """Failed security evidence of with-skill trials (what the agent did at run time)."""
    out = []
    for g in grades:
        if g.condition != "with_skill":
            continue
        m = g.metrics.get("security")
        if m is None:
            continue
        out += [(g, e) for e in m.evidence if e.passed is False]
    return out


def sarif(findings: Sequence[tuple[GradedTrial, object]], tool_version: str) -> str:
    rules: dict[str, dict] = {}
    results = []
    for g, e in findings:
        rule_id = getattr(e, "pattern_id", None) or f"runtime.{e.check}"
        rules.setdefault(rule_id, {"id": rule_id, "shortDescription": {"text": e.check}})
        uri = f"{g.trial_dir}/agent/trajectory.json" if g.trial_dir else f"{g.skill}/SKILL.md"
        results.append({
            "ruleId": rule_id, "level": "error",
            "message": {"text": f"{g.skill} case {g.case_id}: {e.detail}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}],
            "properties": {"skill": g.skill, "case_id": g.case_id, "attempt": g.attempt, "step_id": e.step_id},
        })
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "aces-bench runtime security", "version": tool_version,
                            "rules": list(rules.values())}},
        "results": results}]}
    return json.dumps(log, indent=2) + "\n"


def markdown(verdict: Verdict, changed: Sequence, comparisons: Sequence[SkillComparison],
             suggestions: Sequence[Suggestion], since: str | None) -> str:
    head = "PASS" if verdict.passed else "FAIL"
    lines = [f"## aces-bench ci: {head}", "",
             f"Skills run ({len(changed)}, changed since `{since or 'the start'}` or depending on a change):", ""]
    lines += [f"- `{c.name}`: {c.reason}" for c in changed]
    lines += ["", "| check | status | reason |", "|---|---|---|"]
    lines += [f"| {c.name} | {c.status} | {c.reason} |" for c in verdict.checks]
    lines += ["", "| skill | paired cases | mean change vs last good | 95% CI | judged |", "|---|---|---|---|---|"]
    for c in comparisons:
        ci = f"[{c.ci_lo:+.3f}, {c.ci_hi:+.3f}]" if c.ci_lo is not None else "n/a"
        mean = f"{c.mean_diff:+.3f}" if c.mean_diff is not None else "n/a"
        lines.append(f"| {c.skill} | {c.n_cases} | {mean} | {ci} | {c.status} |")
    if suggestions:
        lines += ["", "### Suggestions", ""]
        for s in suggestions:
            lines.append(f"- `{s.skill}` / `{s.case_id}` ({s.why}; {s.failure_class or 'unclassified'}): "
                         f"LV2 {s.lv2_produced_by}")
    return "\n".join(lines) + "\n"
