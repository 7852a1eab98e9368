"""``aces-bench ci`` on a skills repository with two commits: the second breaks one
skill's script. ``--since HEAD~1`` runs only that skill, compares it with the stored
last good run, applies the policy and writes the packet, JUnit and SARIF, and exits 1
on the regression (reference agent, local bubblewrap sandbox: real trials)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from support.ci import git, run_ci, two_skill_repo

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"

needs_tools = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                                 reason="needs bubblewrap (the local sandbox) and git")


@pytest.mark.sandbox
@needs_tools
def test_ci_runs_only_the_changed_skill_and_fails_on_a_planted_regression(tmp_path):
    repo = two_skill_repo(tmp_path, "no_regression: true\nmax_security_findings: 0\nnull_arm: require_no_effect\n"
                                     "min_pass_rate: 0.5\n")

    first = run_ci(repo, tmp_path / "ci1", "--save-baseline")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    assert "ci: run colsum-a" in first.stdout and "ci: run colsum-b" in first.stdout
    # A first run is judged by the gate, not passed as "not judged".
    assert "ci: pass: gate: every skill helps" in first.stdout
    assert "ci: not run: no regression" in first.stdout
    assert (repo / ".aces" / "last-good" / "trials.parquet").is_file()

    # The planted regression: colsum-b's script now prints a total one too small.
    script = repo / "skills" / "colsum-b" / "scripts" / "colsum.py"
    text = script.read_text()
    assert 'print(f"total={total:.2f}")' in text
    script.write_text(text.replace('print(f"total={total:.2f}")', 'print(f"total={total - 1:.2f}")'))
    git(repo, "commit", "-qam", "colsum-b: faster loop")

    out = tmp_path / "ci2"
    second = run_ci(repo, out, "--since", "HEAD~1")
    assert second.returncode == 1, second.stdout[-2000:] + second.stderr[-3000:]
    assert "ci: run colsum-b: changed: scripts/colsum.py" in second.stdout
    assert "ci: run colsum-a" not in second.stdout
    assert "fail: no regression: regressed vs the last good run" in second.stdout
    # The policy requires the null arm, so the study ran the baseline twice: the reference agent is deterministic.
    assert ("pass: null arm: null lift +0.000 over 6 case(s), 0 differing; two-sided sign-flip p = 1 (consistent "
            "with 0)") in second.stdout
    # The gate judges the changed skill too: it no longer wins any case.
    assert "fail: gate: colsum-b: not enough cases: 6 case(s): 0 won by more than +0.000" in second.stdout

    packet = out / "packet"
    verdict = json.loads((packet / "verdict.json").read_text())
    assert verdict["passed"] is False
    comp = {c["skill"]: c for c in verdict["comparisons"]}
    assert set(comp) == {"colsum-b"} and comp["colsum-b"]["status"] == "regressed"
    assert comp["colsum-b"]["ci_hi"] < 0
    prov = json.loads((packet / "provenance.json").read_text())
    assert len(prov["commit"]) == 40 and [s["name"] for s in prov["skills"]] == ["colsum-b"]
    assert {c["case_id"] for c in prov["cases"]} >= {"explicit-1", "explicit-4"} and all(
        len(c["sha256"]) == 64 for c in prov["cases"])
    suite = ET.parse(packet / "junit.xml").getroot()
    cases = suite.findall("testcase")
    assert {c.get("classname") for c in cases} == {"colsum-b"} and len(cases) == 7
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(failed) >= 6 and all("explicit" in c.get("name") for c in failed)
    sarif = json.loads((packet / "runtime.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["tool"]["driver"]["name"] == "aces-bench runtime security"
    assert (packet / "report" / "index.html").is_file()
    assert list((packet / "trajectories" / "colsum-b").glob("explicit-*/with_skill-attempt*/result.json"))
    md = (packet / "summary.md").read_text()
    assert md.startswith("## aces-bench ci: FAIL") and "| no regression | fail |" in md
    suggestions = json.loads((packet / "suggestions.json").read_text())
    assert suggestions and all(s["lv2_produced_by"] for s in suggestions)



@pytest.mark.sandbox
@needs_tools
def test_a_first_run_fails_a_harmful_skill_on_the_gate(tmp_path):
    # No --since, no stored last good run: the known-effect harmful skill (its script prints one
    # line too few where the baseline counts right) must fail on the gate, not pass unjudged.
    repo = tmp_path / "skills-repo"
    (repo / "skills").mkdir(parents=True)
    shutil.copytree(ROOT / "tests" / "known_effect" / "skills" / "quick-line-count", repo / "skills" / "quick-line-count")
    (repo / "policy.yaml").write_text("no_regression: true\nmin_pass_rate: 0.5\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one skill")
    run = run_ci(repo, tmp_path / "ci")
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-3000:]
    assert "ci: fail: gate: quick-line-count: harms: pass-rate lift -0.833 over 6 case(s)" in run.stdout
    assert "ci: not run: no regression" in run.stdout
    assert "ci: fail: with-skill pass rate: below 50%: quick-line-count 1/6" in run.stdout
