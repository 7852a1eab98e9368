"""The SkillsBench registry's page: its headline, tables and figures, rendered from what
``aces_bench.analysis.external`` computed from the registry file."""

from __future__ import annotations

from pathlib import Path

from aces_bench.core.io import write_text
from aces_bench.core.outcomes import REWARD
from aces_bench.records.stats import ExternalHeadline
from aces_bench.reports.appendix import write_appendix
from aces_bench.reports.figure_data import FigureData
from aces_bench.reports.figures import harness_model_cells, metric_lift
from aces_bench.reports.html import environment, relative, render, svg_data_uri
from aces_bench.reports.latex import Col, ci_cols
from aces_bench.reports.latex import environment as latex_environment
from aces_bench.reports.latex import table as latex_table


def headline_text(h: ExternalHeadline) -> str:
    """The published-style headline sentence, from computed values."""
    return (f"{h.source}: {h.n_tasks} tasks x {h.n_configs} configurations ({'balanced' if h.balanced else 'unbalanced'}): "
            f"average pass rate {h.mean_without:.1f}% without skills, {h.mean_with:.1f}% with "
            f"({h.lift:+.1f} points); configuration gains {h.min_config_lift:+.1f} to {h.max_config_lift:+.1f} points")


def write_external_tables(out_dir: Path, summary, headline: ExternalHeadline, cards: dict) -> list[Path]:
    """LaTeX for the registry: the headline with intervals and the per-configuration gains."""
    env = latex_environment()
    head = next(r for r in summary.pooled if r.outcome == REWARD)
    two = next((r for r in summary.stats.inference.rows if r["outcome"] == REWARD and r["headline"]), None)
    lvl = int(round(100 * summary.stats.settings.level))

    def pts(x):
        return None if x is None else 100 * x

    cols = [Col("", "wide"), Col("Points", "num", 1), *ci_cols(lvl, digits=1), Col("Interval", "wide")]
    rows = [["Without skills", cards["baseline"].estimate, cards["baseline"].ci_lo, cards["baseline"].ci_hi,
             cards["baseline"].method],
            ["With skills", cards["with_skill"].estimate, cards["with_skill"].ci_lo, cards["with_skill"].ci_hi,
             cards["with_skill"].method],
            ["Skill Lift", pts(head.lift), pts(two["ci_lo"]) if two else None, pts(two["ci_hi"]) if two else None,
             two["method"] if two else ""]]
    configs = sorted(headline.configs, key=lambda c: -c.lift)
    tables = {
        "skillsbench_headline": latex_table(
            env, caption=f"SkillsBench registry: pass rates and Skill Lift, in points ({headline.n_tasks} tasks x "
                         f"{headline.n_configs} configurations; {lvl}% CI, tasks are the clusters). Averaging: "
                         f"{headline.averaging}.", short="SkillsBench registry: pass rates and Skill Lift",
            label="tab:skillsbench-headline", cols=cols, rows=rows),
        "skillsbench_configs": latex_table(
            env, caption="SkillsBench registry: gain per configuration, in points (mean reward x 100) over the "
                         "configuration's tasks.", short="SkillsBench registry: gain per configuration",
            label="tab:skillsbench-configs",
            cols=[Col("Harness", "wide"), Col("Model", "wide"), Col("Tasks", "count"), Col("Without", "num", 1),
                  Col("With", "num", 1), Col("Gain", "signed", 1)],
            rows=[[c.harness, c.model, c.n_tasks, c.mean_without, c.mean_with, c.lift] for c in configs]),
    }
    return [write_text(out_dir / f"{stem}.tex", text) for stem, text in tables.items()]


def render_skillsbench_report(out_dir: Path, registry: Path, summary, headline: ExternalHeadline, cards: dict,
                               inputs: FigureData) -> Path:
    """Write the appendix, tables, figures and index.html for the registry from what the
    analysis computed (``aces_bench.analysis.external``); returns index.html."""
    stats = summary.stats
    write_appendix(out_dir, summary, has_triage=False)
    tex = write_external_tables(out_dir / "tables", summary, headline, cards)
    figures = []
    for fn in (metric_lift, harness_model_cells):
        f = fn(inputs, out_dir / "figures")
        figures.append({"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
                        "data_uri": svg_data_uri(f.svg) if f.svg else "",
                        "files": [(fmt, relative(p, out_dir)) for fmt, p in sorted(f.paths.items())]})
    html = render(environment(), "external.html.j2", title="SkillsBench registry: Skill Lift", root="", nav_skills=[],
                  has_triage=False, registry=str(registry), h=headline, s=summary, stats=stats,
                  passk=stats.passk_pooled, figures=figures, cards=cards,
                  inference=[r for r in stats.inference.rows if r["outcome"] == REWARD],
                  latex=[relative(p, out_dir) for p in tex])
    return write_text(out_dir / "index.html", html)
