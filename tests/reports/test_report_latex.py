"""LaTeX tables: every special character escaped; the document compiles with pdflatex."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from aces_bench.reports.latex import render_tables, tex_escape
from aces_bench.reports.summary import ReportSummary

NASTY = r"a&b%c$d#e_f{g}h~i^j\k<l>m|n"


def test_every_special_character_is_escaped():
    assert tex_escape(NASTY) == (r"a\&b\%c$\$$d\#e\_f\{g\}h\~{}i\^{}j$\backslash$k$<$l$>$m$|$n")
    assert tex_escape("naïve 💥") == "na?ve ?"
    assert tex_escape(None) == ""


def test_tables_escape_names_and_keep_booktabs(report_dir):
    summary = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    summary = summary.model_copy(update={"source": NASTY})
    tex = render_tables(summary, [], [])
    assert tex_escape(NASTY) in tex["headline"]
    assert NASTY not in tex["headline"]
    for stem in ("headline", "metrics", "inventory", "coverage", "dimensions"):
        assert "\\toprule" in tex[stem] and "\\midrule" in tex[stem] and "\\bottomrule" in tex[stem]
    assert "skill\\_execution" in tex["metrics"] and "Discoverability, Effectiveness" in tex["metrics"]
    assert "skill\\_execution.activation" in tex["dimensions"]
    assert "\\input{headline}" in tex["tables"]


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex is not on PATH (Debian: apt-get install --no-install-recommends texlive-latex-base texlive-latex-recommended)")
def test_tables_compile_with_pdflatex(report_dir, tmp_path):
    summary = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    summary = summary.model_copy(update={"source": NASTY})
    for stem, text in render_tables(summary, [], []).items():
        (tmp_path / f"{stem}.tex").write_text(text)
    for p in (report_dir / "tables").glob("*.tex"):
        if p.stem in ("inventory", "coverage"):
            shutil.copy(p, tmp_path / p.name)  # the study's real inventory and coverage rows
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "tables.tex"], cwd=tmp_path, check=False,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000
