"""The `skillevaluator` rule profile: SkillEvaluator 0.2.0's Tier 1 quality score.

The corpus test compares with SkillEvaluator's own results on the shared 167 public
skills (SKILLEVALUATOR_TIER1.json, produced by SkillEvaluator, not by this project) and
prints the same side-by-side figures for this project's own profile.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.static.catalog import catalog
from aces_bench.static.pipeline import ScanOptions, run_scan
from aces_bench.static.reference import (
    MAX_RATE_GAP,
    MIN_SPEARMAN,
    agreement,
    format_agreement,
    load_skillevaluator,
)
from aces_bench.static.scanner import SkillRef, scan_skill

PUBLIC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "public-skills"
SE_JSON = PUBLIC / "SKILLEVALUATOR_TIER1.json"

# Passes every SkillEvaluator rule: sections by its literal headings, SKILL_SPEC fields.
CLEAN = """---
name: report-writer
description: Writes weekly status reports from a ticket export. Use when a manager asks for a status summary.
version: 1.0.0
metadata:
  author: Team Docs
  tags: [reports]
---
# Report writer

## Purpose
Turn a CSV of tickets into a one-page report.

## Prerequisites
Python 3.12.

## Instructions
1. Run `report build tickets.csv`.
2. Check the totals.

## Examples
```bash
report build tickets.csv
```

## Limitations
Only CSV input.

## Troubleshooting
An invalid header fails with a clear error; fix the header row.
"""


def _skill(tmp_path: Path, text: str, name: str = "report-writer") -> Path:
    d = tmp_path / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text, encoding="utf-8")
    return d


def _scan(d: Path):
    r, _ = scan_skill(SkillRef(d, d.name, "test"), cat=catalog("skillevaluator"))
    return r


def test_clean_skill_scores_100(tmp_path):
    r = _scan(_skill(tmp_path, CLEAN))
    assert [f.message for f in r.findings] == []
    assert r.score == 100.0 and r.grade == "A"


def test_literal_semantics_and_weights(tmp_path):
    """SkillEvaluator's literal tests, which this project's own profile does not share:
    '## Setup' is not '## Prerequisites', the folder name (not the frontmatter name) is
    judged, author/tags count only under metadata:, and one deduction per rule."""
    text = (
        CLEAN.replace("## Prerequisites", "## Setup")
        .replace("metadata:\n  author: Team Docs\n  tags: [reports]\n", "author: Team Docs\n")
        .replace("Use when a manager", "Your manager")
    )
    r = _scan(_skill(tmp_path, text, name="rw"))
    got = sorted((f.rule_id, f.message) for f in r.findings)
    assert got == [
        ("SE-C017", "SKILL_SPEC recommended field missing: 'metadata.author'"),
        ("SE-C018", "SKILL_SPEC recommended field missing: 'metadata.tags'"),
        ("SE-D005", "Description uses first/second person"),
        ("SE-D008", "Skill name very short: 'rw'"),
        ("SE-R004", "No prerequisites/requirements documented"),
    ]
    dims = {d.dimension: d.score for d in r.dimensions}
    # correctness 100-5-5, discoverability 100-15-10, reliability 100-5
    assert dims == {"correctness": 90.0, "discoverability": 75.0, "reliability": 95.0, "efficiency": 100.0}
    assert r.score == round(0.35 * 90 + 0.25 * 75 + 0.25 * 95 + 0.15 * 100, 1) == 89.0


def test_skill_type_from_files_on_disk(tmp_path):
    """A script on disk makes the skill script-based (table and run_script rules apply);
    a script only listed in MANIFEST.json leaves it guide-only and says so."""
    d = _skill(tmp_path / "a", CLEAN)
    (d / "scripts").mkdir()
    (d / "scripts" / "build.py").write_text("print('hi')\n", encoding="utf-8")
    r = _scan(d)
    assert {f.rule_id for f in r.findings} == {"SE-C006", "SE-C007", "SE-R002"}
    d2 = _skill(tmp_path / "b", CLEAN)
    (d2 / "MANIFEST.json").write_text(
        json.dumps({"files": [{"path": "SKILL.md", "copied": True},
                              {"path": "scripts/build.py", "bytes": 12, "copied": False}]}),
        encoding="utf-8",
    )
    r2 = _scan(d2)
    assert r2.findings == [] and "SE-TYPE" in r2.not_evaluable
    assert "not copied" in r2.not_evaluable["SE-TYPE"]


def test_cli_profile_and_unknown_profile(tmp_path):
    d = _skill(tmp_path, CLEAN.replace("## Limitations", "## Limits"))
    cmd = [sys.executable, "-m", "aces_bench.cli", "scan", "--profile", "skillevaluator", "--no-lint", "--quiet", str(d)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "report-writer: 98.8 (A) PASS  findings=1" in out.stdout
    bad = subprocess.run(cmd[:4] + ["--profile", "nvidia", str(d)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice: 'nvidia'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_bad_reference_file_is_one_line_error(tmp_path):
    p = tmp_path / "se.json"
    p.write_text('{"skills": {"x": {"dimensions": {}}}}', encoding="utf-8")
    with pytest.raises(Exception, match="cannot read SkillEvaluator results: KeyError") as exc:
        load_skillevaluator(p)
    assert str(p) in str(exc.value)


@pytest.mark.shared
@pytest.mark.parametrize("profile", ["skillevaluator", "aces"])
def test_agreement_with_skillevaluator_on_shared_corpus(profile):
    if not SE_JSON.is_file():
        pytest.skip(f"shared corpus absent: {SE_JSON}")
    _, results = run_scan([PUBLIC], ScanOptions(lint=False, profile=profile))
    ag = agreement(results, load_skillevaluator(SE_JSON))
    print("\n" + "\n".join(format_agreement(ag, profile)))
    assert ag["n_paired"] == 167 and not ag["only_in_scan"] and not ag["only_in_reference"]
    if profile == "skillevaluator":
        assert ag["spearman"] >= MIN_SPEARMAN
        for row in ag["rate_rows"]:
            assert abs(row["difference"]) <= MAX_RATE_GAP, row
        assert ag["meets_bar"]
    else:
        # This project's own profile is stricter about structure and looser about
        # literal headings; it is reported, not required to agree.
        assert ag["spearman"] is not None
