"""Manifest-only scripts ("not evaluable"), advisory lint, and the shared 167-skill corpus."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from support.static_skills import clean_spec, mutate, write_skill

from aces_bench.static.pipeline import ScanOptions, run_scan, write_outputs

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
PUBLIC_SKILLS = SHARED / "data" / "public-skills"
REPORTED = SHARED / "data" / "aces-paper" / "reported.json"


def test_scripts_listed_only_in_manifest_are_not_evaluable(tmp_path):
    spec = mutate(lambda s: s.files.pop("scripts/fill.py"))
    d = write_skill(tmp_path, spec)
    manifest = {
        "files": [
            {"path": "SKILL.md", "bytes": 1, "copied": True},
            {"path": "scripts/fill.py", "bytes": 900, "copied": False},
            {"path": "scripts/setup.sh", "bytes": 90, "copied": False},
        ]
    }
    (d / "MANIFEST.json").write_text(json.dumps(manifest))
    _, (r,) = run_scan([d], ScanOptions(lint=False))
    ids = {f.rule_id for f in r.findings}
    assert "C013" not in ids, "a manifest-listed script counts as present"
    assert {"R002", "R008"} <= set(r.not_evaluable) and "not copied" in r.not_evaluable[
        "R002"
    ]
    assert (
        "security" in r.not_evaluable
        and "scripts/fill.py" in r.not_evaluable["security"]
    )
    assert "R002" not in ids and "R008" not in ids
    assert (
        r.files_present == 5 and r.files_readable == 3
    )  # 3 on disk + 2 manifest-only; MANIFEST.json itself is not a skill file


def _with_venv_bin(monkeypatch):
    monkeypatch.setenv(
        "PATH",
        os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    )


def test_lint_reports_tools_not_on_path_as_not_run(tmp_path, monkeypatch):
    write_skill(tmp_path, clean_spec())
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    _, (r,) = run_scan([tmp_path], ScanOptions())
    assert {t.tool: t.status for t in r.tools} == {
        "ruff": "not_run",
        "shellcheck": "not_run",
    }
    assert r.lint == []


def test_ruff_and_shellcheck_findings_are_advisory(tmp_path, monkeypatch):
    _with_venv_bin(monkeypatch)
    if not shutil.which("ruff") or not shutil.which("shellcheck"):
        pytest.skip("ruff and shellcheck are both needed on PATH for this test")
    spec = mutate(
        lambda s: s.files.update(
            {
                "scripts/bad.py": "import os\n",
                "scripts/bad.sh": "#!/bin/sh\nset -e\necho $1\n",
            }
        )
    )
    write_skill(tmp_path, spec)
    _, (r,) = run_scan([tmp_path], ScanOptions())
    assert {t.tool: t.status for t in r.tools} == {"ruff": "ran", "shellcheck": "ran"}
    codes = {(lf.tool, lf.code, lf.file) for lf in r.lint}
    assert ("ruff", "F401", "scripts/bad.py") in codes
    assert ("shellcheck", "SC2086", "scripts/bad.sh") in codes
    _, (plain,) = run_scan([tmp_path], ScanOptions(lint=False))
    assert plain.score == r.score, "lint never changes the structural score"


@pytest.mark.shared
def test_shared_public_skills_corpus(tmp_path):
    if not PUBLIC_SKILLS.is_dir():
        pytest.skip(f"shared corpus absent: {PUBLIC_SKILLS}")
    corpus, results = run_scan(
        [PUBLIC_SKILLS],
        ScanOptions(lint=False, reported=REPORTED if REPORTED.exists() else None),
    )
    assert corpus.n_skills == len(results) == 167
    assert corpus.n_errors == 0, corpus.errors
    s = corpus.stats
    assert (
        s.n == 167
        and s.mean is not None
        and s.sd is not None
        and s.min <= s.median <= s.max
    )
    assert len(corpus.top_violations) == 10 and all(
        0 < v.share <= 1 for v in corpus.top_violations
    )
    assert {row["source"] for row in corpus.by_source} == {
        "K-Dense-AI__claude-scientific-skills",
        "anthropics__skills",
        "obra__superpowers",
        "openai__skills",
    }
    # Script bodies are not in the shared copy: checks that need them say so.
    assert corpus.not_evaluable_skills.get("security", 0) > 0
    if REPORTED.exists():
        rows = {r["figure"]: r for r in corpus.comparison["score_rows"]}
        assert (
            rows["mean"]["reported"] == 79.2
            and rows["share >= 70"]["reported"] == 0.945
        )
        assert rows["mean"]["difference"] == pytest.approx(s.mean - 79.2, abs=1e-3)
        assert {r["reported_label"] for r in corpus.comparison["violation_rows"]} >= {
            "no Limitations section",
            "tools not declared in frontmatter",
        }
    written = write_outputs(tmp_path / "out", corpus, results)
    assert len(written) == 167 + 5
    assert (
        "## Compared with the ACES paper"
        in (tmp_path / "out" / "summary.md").read_text()
        or not REPORTED.exists()
    )
