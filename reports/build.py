"""Render ``<results>/report/`` from what the analysis computed: figures, LaTeX, HTML.

``aces_bench.analysis.report`` reads the study, computes summary.json and everything the
pages show (``ReportView``) and calls ``render_report``; nothing here computes a statistic,
reads a trajectory or scans a skill.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from aces_bench.core.io import write_text
from aces_bench.records.summary import ReportSummary
from aces_bench.reports.analysis import arm_views
from aces_bench.reports.appendix import write_appendix
from aces_bench.reports.dimensions import mapping
from aces_bench.reports.figure_data import FigureData, PaperTables
from aces_bench.reports.figure_set import draw_figures
from aces_bench.reports.html import (
    PairView,
    environment,
    pretty_json,
    relative,
    render,
    skill_href,
    svg_data_uri,
)
from aces_bench.reports.inventory import CoverageRow, InventoryItem
from aces_bench.reports.latex import write_tables
from aces_bench.reports.records import StudyData
from aces_bench.reports.standin import stand_in_text
from aces_bench.reports.verdict import (
    correlation_sentence,
    first_screen_summary,
    unreviewed_notes,
    verdict_rows,
)

REPORT_DIR = "report"
SUMMARY_FILE = "summary.json"
PAPER_PAGE = "paper.html"


@dataclass
class ReportView:
    """Everything the pages show, computed by the analysis: the summary, the study's stored
    records (provenance, grades), the figures' tables, the inventory, the one-sided pairs,
    per skill, its paired cases and the negative-lift triage with their trajectory excerpts,
    and, when the report has the paper page, what it draws beyond the figures (``paper``;
    its side-by-side rows are the summary's, ``summary.side_by_side``)."""

    summary: ReportSummary
    study: StudyData
    figures: FigureData
    inventory: list[InventoryItem]
    coverage: list[CoverageRow]
    one_sided_keys: pd.DataFrame
    skill_pairs: dict[str, list[PairView]] = field(default_factory=dict)
    triage: list = field(default_factory=list)
    controls: list = field(default_factory=list)
    headline_sentence: str = ""
    paper: PaperTables | None = None


def render_report(out: Path, view: ReportView) -> None:
    """Write figures/, tables/, the appendix, index.html, skills/<skill>.html, triage.html and
    (with ``view.paper``) paper.html into ``out``."""
    summary, study = view.summary, view.study
    outcome = summary.stats.settings.headline_outcome
    figures = draw_figures(view.figures, out / "figures")
    tex = write_tables(out / "tables", summary, view.inventory, view.coverage)

    write_appendix(out, summary)
    env = environment()
    skills = sorted(study.trials["skill"].astype(str).unique())
    nav = [{"name": s, "href": skill_href(s)} for s in skills]
    paper_href = PAPER_PAGE if view.paper is not None else None
    _write_index(env, out, view, figures, nav, tex, paper_href=paper_href)
    for skill in skills:
        rows = [r for r in summary.by_skill if r.group.get("skill") == skill]
        html = render(env, "skill.html.j2", title=f"{skill}: paired cases", root="../", nav_skills=nav, skill=skill,
                      rows=rows, pairs=view.skill_pairs.get(skill, []), outcome=outcome,
                      paper_href=paper_href, analysis_set=summary.analysis_set)
        write_text(out / skill_href(skill), html)
    groups = view.triage
    html = render(env, "triage.html.j2", title="Negative-lift triage", root="", nav_skills=nav, groups=groups,
                  outcome=outcome, n_negative=sum(len(g.cases) for g in groups),
                  paper_href=paper_href, analysis_set=summary.analysis_set)
    write_text(out / "triage.html", html)
    if view.paper is not None:
        # The ACES paper's figures with its reported values beside the study's (paper.html).
        from aces_bench.reports.paper import write_paper_page

        write_paper_page(out, view.figures, view.paper, summary.side_by_side, nav=nav)


def _provenance_views(study: StudyData) -> list[dict]:
    out = []
    for m in study.members:
        name = m.path.name if m.path != study.results_dir else m.path.name or str(m.path)
        config = pretty_json(m.provenance.spec.model_dump(mode="json")) if m.provenance else ""
        out.append({"name": name, "prov": m.provenance, "missing": m.provenance_note, "config": config,
                    "grades_note": m.grades_note})
    return out


def _write_index(env, out: Path, view: ReportView, figures, nav: list[dict], tex: list[Path],
                 paper_href: str | None = None) -> Path:
    summary, study, items, cover, keys = view.summary, view.study, view.inventory, view.coverage, view.one_sided_keys
    stats = summary.stats
    outcome = stats.settings.headline_outcome
    headline = next(r for r in summary.pooled if r.outcome == outcome)
    boot = [r for r in stats.bootstrap.rows if r["outcome"] == outcome]
    pooled = {r.outcome: r for r in summary.pooled}
    dims = [{"dimension": m.dimension, "source": m.source, "whole": m.whole_metric, "question": m.question,
             "row": pooled.get(m.metric)} for m in mapping()]
    fig_views = []
    for f in figures:
        files = [(fmt, relative(p, out)) for fmt, p in sorted(f.paths.items())]
        fig_views.append({"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
                          "data_uri": svg_data_uri(f.svg) if f.svg else "", "files": files})
    verdicts = verdict_rows(summary, {n["name"]: n["href"] for n in nav})
    adjustment = next((v.row.adjustment for v in verdicts if v.row is not None and v.row.adjustment), None)
    bounds = next((r for r in (stats.missingness.bounds.rows if stats.missingness.bounds else [])
                   if r["outcome"] == outcome), None)
    inference_rows = [r for r in (stats.inference.rows if stats.inference else []) if r["outcome"] == outcome]
    sl = summary.static_vs_live
    html = render(
        env, "index.html.j2", title=f"aces-bench report: {study.results_dir.resolve().name}", root="", nav_skills=nav,
        s=summary, stats=stats, headline=headline, boot=boot, figures=fig_views, dimensions=dims,
        skills=nav, inventory=items, coverage=cover, one_sided_keys=keys.to_dict("records"),
        one_sided_cols=list(keys.columns), provenance=_provenance_views(study), results_dir=str(study.results_dir),
        latex=[relative(p, out) for p in tex], verdicts=verdicts, adjustment=adjustment, bounds=bounds,
        inference=inference_rows, headline_sentence=view.headline_sentence, controls=view.controls,
        first_summary=first_screen_summary(summary), unreviewed=unreviewed_notes(summary),
        static_sentence=correlation_sentence(sl.tier1 if sl is not None else None, "Tier 1 structural"),
        paper_href=paper_href, arms=arm_views(summary), stand_in=stand_in_text(summary.stand_in),
    )
    return write_text(out / "index.html", html)
