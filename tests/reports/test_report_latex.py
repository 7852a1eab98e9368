"""LaTeX tables: every special character escaped; the document compiles with pdflatex."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from aces_bench.records.summary import ReportSummary
from aces_bench.reports.latex import render_tables, tex_escape

NASTY = r"a&b%c$d#e_f{g}h~i^j\k<l>m|n"


def test_quotes_are_typographic_and_a_slash_may_break():
    assert tex_escape('the "primary" arm') == "the ``primary'' arm"
    assert tex_escape("the skill's 'own' files") == "the skill's `own' files"
    assert tex_escape("anthropic/claude-sonnet") == "anthropic\\slash{}claude-sonnet"


def test_intervals_are_numbers_and_labels_are_words(report_dir):
    headline = (report_dir / "tables" / "headline.tex").read_text()
    body = headline[headline.index("\\midrule"):headline.index("\\bottomrule")]
    for line in body.strip().splitlines()[1:]:
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        assert cells[0][0].isupper() and "\\_" not in cells[0], cells  # "Task outcome", not outcome\_failed
        for c in cells[1:]:
            assert re.fullmatch(r"[+-]?\d+(\.\d+)?|\{--\}", c), (c, line)  # a number or an en dash, never prose
    assert "S[table-format=" in headline and "\\multicolumn{2}{c}{95\\% CI}" in headline


def test_every_special_character_is_escaped():
    assert tex_escape(NASTY) == (r"a\&b\%c$\$$d\#e\_f\{g\}h\~{}i\^{}j$\backslash$k$<$l$>$m$|$n")
    assert tex_escape("naïve 💥") == "na?ve ?"
    assert tex_escape(None) == ""


def test_tables_escape_names_and_keep_booktabs(report_dir):
    summary = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    summary = summary.model_copy(update={"source": NASTY})
    tex = render_tables(summary, [], [])
    # The study's name heads the standalone document (captions say what the numbers are, not the folder).
    assert tex_escape(NASTY) in tex["tables"]
    assert not any(NASTY in text for text in tex.values())
    for stem in ("headline", "metrics", "inventory", "coverage", "dimensions"):
        assert "\\toprule" in tex[stem] and "\\midrule" in tex[stem] and "\\bottomrule" in tex[stem]
    # Row labels are words, not keys.
    assert "Skill execution" in tex["metrics"] and "Discoverability, Effectiveness" in tex["metrics"]
    assert "skill\\_execution" not in tex["metrics"]
    assert "Skill execution: activation" in tex["dimensions"]
    assert "\\input{headline}" in tex["tables"]


def _has_siunitx() -> bool:
    return shutil.which("kpsewhich") is not None and bool(
        subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True, text=True, check=False).stdout.strip())


@pytest.mark.skipif(shutil.which("pdflatex") is None or not _has_siunitx(),
                    reason="pdflatex with siunitx is not installed (Debian: apt-get install --no-install-recommends "
                           "texlive-latex-base texlive-latex-recommended texlive-science; make test-deps)")
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
