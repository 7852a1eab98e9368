"""``aces-bench ci`` leaves the repository clean, and a wrong number points at the script and the case."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.ci import git, two_skill_repo

from aces_bench.ci.cli import ignored_work_dir
from aces_bench.ci.suggest import WRONG_RESULT, Lv1Item, classify, wrong_result_note

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
needs_tools = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                                 reason="needs bubblewrap (the local sandbox) and git")


def _porcelain(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                          check=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_work_folder_is_ignored_whatever_is_written_in_it(tmp_path, monkeypatch):
    monkeypatch.delenv("ACES_EMIT_CACHE", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("skills\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    work = ignored_work_dir(repo)
    assert work == repo / ".aces" and os.environ["ACES_EMIT_CACHE"] == str(work / "cache" / "emit")
    for rel in ("ci/packet/verdict.json", "last-good/trials.parquet", "cache/emit/x/y"):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("x")
    assert _porcelain(repo) == ""


def test_a_script_that_computes_a_wrong_number_is_not_told_to_add_a_checklist():
    items = [Lv1Item(metric="accuracy", check="number", detail="expected 141.75, answer says 140.75", step_id=7)]
    assert classify(items, script_ran=True) == WRONG_RESULT
    assert classify([], script_ran=True, reward=0.0) == WRONG_RESULT
    # The script never ran: that is a skipped step (or no class), not a wrong result.
    assert classify(items, script_ran=False) != WRONG_RESULT
    note = wrong_result_note(FIXTURE, "explicit-1", items)
    assert note.startswith("scripts/colsum.py ran as documented and the answer to case explicit-1 is wrong")
    assert "expected: total=141.75" in note and "checklist" not in note.lower()


@pytest.mark.sandbox
@needs_tools
def test_a_ci_run_in_a_fresh_repo_leaves_git_status_empty_and_names_the_script(tmp_path):
    repo = two_skill_repo(tmp_path, "min_pass_rate: 0.5\n")
    script = repo / "skills" / "colsum-b" / "scripts" / "colsum.py"
    script.write_text(script.read_text().replace('print(f"total={total:.2f}")', 'print(f"total={total - 1:.2f}")'))
    git(repo, "commit", "-qam", "colsum-b: off by one")
    env = {k: v for k, v in os.environ.items() if k != "ACES_EMIT_CACHE"}
    env.update(HARBOR_TELEMETRY="0", LITELLM_LOCAL_MODEL_COST_MAP="True")
    # As a user runs it: from the repository, with the default output folder.
    proc = subprocess.run([sys.executable, "-m", "aces_bench.cli", "ci", "--skills", "skills", "--policy", "policy.yaml",
                           "--save-baseline", f"+backend.kwargs.root_parent={tmp_path}"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert _porcelain(repo) == ""
    packet = repo / ".aces" / "ci" / "packet"
    suggestions = [s for s in json.loads((packet / "suggestions.json").read_text()) if s["skill"] == "colsum-b"]
    assert suggestions and all(s["failure_class"] == WRONG_RESULT for s in suggestions)
    assert all(s["lv2_note"].startswith(f"scripts/colsum.py ran as documented and the answer to case {s['case_id']}")
               and s["lv2_diff"] is None for s in suggestions)
