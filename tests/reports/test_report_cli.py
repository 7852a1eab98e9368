"""aces-bench report: study dirs, SkillsBench's registry, and user errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from aces_bench.analysis.cli import main
from aces_bench.core.errors import ReportError

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
REGISTRY = SHARED / "data" / "skillsbench" / "results-registry.json"


def test_report_command_rebuilds_from_stored_results(study_dir, tmp_path, capsys):
    out = tmp_path / "r"
    assert main([str(study_dir / "terminus-gpt4o"), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out / 'index.html'}"
    assert (out / "summary.json").is_file()


def test_neither_or_both_inputs_is_a_user_error(tmp_path, capsys):
    with pytest.raises(ReportError, match="give either a results dir or --skillsbench"):
        main([])
    with pytest.raises(ReportError, match="not both or neither"):
        main([str(tmp_path), "--skillsbench", str(tmp_path / "r.json")])
    # Through the top-level CLI: one message, exit 2, no traceback.
    from aces_bench.cli import main as aces_main

    assert aces_main(["report", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "results dir does not exist" in err and "Traceback" not in err


def test_bad_registry_is_a_user_error(tmp_path):
    bad = tmp_path / "registry.json"
    bad.write_text("{not json")
    with pytest.raises(ReportError, match="not valid JSON"):
        main(["--skillsbench", str(bad), "--out", str(tmp_path / "o")])


@pytest.mark.shared
def test_skillsbench_registry_reproduces_the_published_headline(tmp_path, capsys):
    if not REGISTRY.is_file():
        pytest.skip(f"SkillsBench registry absent ({REGISTRY}): needs ../shared/data/skillsbench")
    out = tmp_path / "sb"
    assert main(["--skillsbench", str(REGISTRY), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "87 tasks x 18 configurations (balanced)" in text
    assert "33.9% without skills, 50.5% with (+16.6 points); configuration gains +4.1 to +25.7 points" in text
    headline = json.loads((out / "headline.json").read_text())
    assert round(headline["mean_without"], 1) == 33.9 and round(headline["mean_with"], 1) == 50.5
    summary = json.loads((out / "summary.json").read_text())
    (pooled,) = summary["pooled"]
    assert pooled["outcome"] == "reward" and pooled["n"] == 87 * 18
    assert pooled["lift"] * 100 == pytest.approx(headline["lift"])  # balanced grid: plain mean == nested mean
    html = (out / "index.html").read_text()
    assert "+16.6 points" in html and re.search(r"gains \+4\.1 to \+25\.7", html)
