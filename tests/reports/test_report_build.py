"""build_report over a synthetic multirun study: files, summary numbers, attribution, errors."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from support.stats import cr2_matrix

from aces_bench.analysis import build_report
from aces_bench.core.errors import ReportError
from aces_bench.core.metrics import metric_names
from aces_bench.records.summary import ReportSummary
from aces_bench.records.trials import PAIR_KEY

FIGURES = ("metric_lift", "skill_harness_heatmap", "harness_paired_bars", "harness_model_cells", "model_sweep", "routing_stress",
           "static_vs_live")


def _trials(study_dir: Path) -> pd.DataFrame:
    return pd.concat([pd.read_csv(p) for p in sorted(study_dir.glob("*/trials.csv"))], ignore_index=True)


def _summary(report_dir: Path) -> ReportSummary:
    return ReportSummary.model_validate_json((report_dir / "summary.json").read_text())


def test_report_writes_every_artifact(report_dir):
    for name in ("index.html", "triage.html", "summary.json", "appendix.html"):
        assert (report_dir / name).is_file()
    for stem in FIGURES:
        for fmt in ("svg", "pdf", "png"):
            assert (report_dir / "figures" / f"{stem}.{fmt}").stat().st_size > 1000, (stem, fmt)
    assert sorted(p.stem for p in (report_dir / "tables").glob("*.tex")) == sorted(
        ["verdict", "headline", "metrics", "pass_rates", "inventory", "coverage", "dimensions", "tables", "appendix"])
    assert sorted(p.name for p in (report_dir / "skills").glob("*.html")) == [
        "access-log-latency.html", "invoice-reconciler.html", "semver-bump.html"]


def test_summary_counts_match_an_independent_count(report_dir, study_dir):
    s = _summary(report_dir)
    trials = _trials(study_dir)
    assert s.schema_version == "1"
    assert s.counts.n_trials == len(trials) == 144
    failed = trials.loc[trials["status"] != "ok", "status"].value_counts().to_dict()
    assert s.counts.failed_by_status == failed == {"agent_error": 1, "infra_error": 2, "timeout": 1}
    scored = trials.loc[trials["outcome"].notna(), "condition"].value_counts().to_dict()
    assert s.counts.n_scored_by_condition == scored
    assert s.counts.n_missing_trajectory == int((~trials["has_trajectory"].astype(bool)).sum())
    assert s.counts.n_scored_pairs + s.counts.n_one_sided + s.counts.n_neither == s.counts.n_pair_keys == 72


def test_pooled_and_grouped_lift_match_a_direct_paired_mean(report_dir, study_dir):
    s = _summary(report_dir)
    trials = _trials(study_dir)
    key = list(PAIR_KEY)
    w = trials[trials["condition"] == "with_skill"].set_index(key)
    b = trials[trials["condition"] == "baseline"].set_index(key)
    both = w.join(b, how="inner", suffixes=("_w", "_b"))
    # Headline on positive cases: negative controls are reported apart.
    both = both[~(both["negative_control_w"].astype(bool) | (both["case_kind_w"] == "negative"))]
    d = (both["composite_w"] - both["composite_b"]).dropna()
    pooled = next(r for r in s.pooled if r.outcome == "composite")
    assert pooled.n == len(d)
    assert pooled.lift == pytest.approx(d.mean())
    # two harness configurations are too few to cluster on: by case, CR2 with Bell-McCaffrey df
    # (these cases have unequal numbers of pairs, so fewer df than cases - 1), from the general
    # matrix formulas written in the tests
    cases = [f"{k[0]}/{k[1]}" for k in d.index]
    G = len(set(cases))
    var, df = cr2_matrix(d.to_numpy(float), np.array(cases))
    assert pooled.n_cases == G and pooled.df == pytest.approx(df) and df < G - 1
    assert pooled.ci_lo == pytest.approx(d.mean() - stats.t.ppf(0.975, df) * np.sqrt(var))
    assert pooled.ci_method == f"cluster-robust (CR2, Bell-McCaffrey df) by case, t with {df:.1f} df ({G} cases)"
    by_mode = {r.group["workspace_mode"]: r for r in s.by_workspace_mode if r.outcome == "composite"}
    assert set(by_mode) == {"isolation", "group"}
    dm = d.groupby(level="workspace_mode").mean()
    assert by_mode["group"].lift == pytest.approx(dm["group"])
    assert {r.group["skill"] for r in s.by_skill} == {"invoice-reconciler", "semver-bump", "access-log-latency"}
    by_decoys = {r.group["decoy_set"]: r for r in s.by_decoy_set if r.outcome == "composite"}
    dd = d.groupby(level="decoy_set").mean()
    assert set(by_decoys) == set(dd.index) and len(dd) == 2
    for name, row in by_decoys.items():
        assert row.lift == pytest.approx(dd[name])
    assert {r.outcome for r in s.pooled} >= {*metric_names(), "composite", "outcome_only"}


def test_routing_premium_is_group_minus_isolation_with_a_ci(report_dir):
    s = _summary(report_dir)
    (row,) = s.routing_premium
    assert row["premium"] == pytest.approx(row["lift_group"] - row["lift_isolation"])
    assert row["ci_lo"] is not None and row["ci_lo"] < row["premium"] < row["ci_hi"]


def test_every_number_names_who_produced_it(report_dir):
    s = _summary(report_dir)
    assert "reference agent (deterministic, non-LLM)" in s.labels.agents
    # The claude-code member runs on Docker (installed agents cannot use backend=local).
    assert s.labels.backends == ["docker (Harbor)", "local bubblewrap sandbox"]
    ref_backend = next(r for r in s.by_harness if r.group["harness"] == "reference" and r.outcome == "accuracy")
    assert ref_backend.produced_by.backends == ["local bubblewrap sandbox"]
    assert s.labels.judges == ["heuristic (offline, deterministic)"]
    ref = next(r for r in s.by_harness if r.group["harness"] == "reference" and r.outcome == "accuracy")
    assert ref.produced_by.agents == ["reference agent (deterministic, non-LLM)"]
    assert ref.produced_by.graders == ["heuristic (offline, deterministic)"]
    sec = next(r for r in s.pooled if r.outcome == "security")
    assert sec.produced_by.graders == ["deterministic graders (aces-bench)"]
    assert next(r for r in s.pooled if r.outcome == "reward").produced_by.graders == ["task verifier (tests/test.sh)"]


def test_rebuild_reads_only_and_gives_byte_identical_figures(study_dir, report_dir, tmp_path):
    def snapshot(root: Path) -> dict[str, str]:
        return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(root.rglob("*")) if p.is_file() and "report" not in p.relative_to(root).parts}

    before = snapshot(study_dir)
    other = tmp_path / "elsewhere"
    assert build_report(study_dir, out_dir=other) == other / "index.html"
    assert snapshot(study_dir) == before  # nothing outside the report dir was written
    for stem in FIGURES:
        for fmt in ("svg", "pdf"):
            assert (other / "figures" / f"{stem}.{fmt}").read_bytes() == (report_dir / "figures" / f"{stem}.{fmt}").read_bytes(), stem
    assert (other / "summary.json").read_text() == (report_dir / "summary.json").read_text()


def test_single_study_dir_with_one_harness_skips_figures_with_reasons(study_dir, tmp_path):
    member = tmp_path / "reference-isolation"
    shutil.copytree(study_dir / "reference-isolation", member, ignore=shutil.ignore_patterns("report"))
    index = build_report(member)
    html = index.read_text()
    assert "skill x harness map needs two or more" in html
    assert "no harness was run with two or more models" in html
    assert "every with-skill trial saw the same number of skills (1)" in html
    assert not (index.parent / "figures" / "model_sweep.svg").exists()
    assert (index.parent / "figures" / "metric_lift.svg").is_file()


def test_missing_results_dir_is_a_user_error(tmp_path):
    with pytest.raises(ReportError, match="results dir does not exist"):
        build_report(tmp_path / "nope")
    with pytest.raises(ReportError, match="no trials.parquet here or in its subfolders"):
        build_report(tmp_path)


def test_corrupt_grades_line_names_file_and_line(study_dir, tmp_path):
    member = tmp_path / "m"
    shutil.copytree(study_dir / "terminus-gpt4o", member, ignore=shutil.ignore_patterns("report"))
    lines = (member / "grades.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]
    (member / "grades.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ReportError) as err:
        build_report(member)
    assert "grades.jsonl: line 3 is not JSON" in str(err.value)
    lines[2] = json.dumps({"schema_version": "9", "task_id": "x"})
    (member / "grades.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ReportError, match="line 3: grades schema_version '9'"):
        build_report(member)


def test_invalid_provenance_is_a_user_error_and_missing_one_is_stated(study_dir, tmp_path):
    member = tmp_path / "m"
    shutil.copytree(study_dir / "terminus-gpt4o", member, ignore=shutil.ignore_patterns("report"))
    (member / "provenance.json").write_text('{"schema_version": "1", "created_at": 3}')
    with pytest.raises(ReportError, match="provenance.json: invalid values"):
        build_report(member)
    (member / "provenance.json").unlink()
    html = build_report(member).read_text()
    assert "provenance.json is missing: the report cannot say which config and code produced these results" in html


def test_the_report_reads_grades_without_the_grading_layer():
    # The report reads grades.jsonl through aces_bench.records.trials; that must not load the grading layer or a judge client.
    code = ("import sys, aces_bench.reports.records; "
            "bad = [m for m in sys.modules if m.startswith(('aces_bench.judges.factory', 'aces_bench.judges.litellm_judge', 'aces_bench.grading.grade', 'litellm'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
