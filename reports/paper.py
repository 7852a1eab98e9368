"""The ACES paper's figures and tables, drawn from a study's own results with the
paper's reported values beside them (``aces_paper_reported.json``, copied verbatim
from the paper's text, tables and appendices).

Every figure here marks the paper's value with one labelled overlay ("ACES paper,
reported") where the paper gives one, and says so in the caption where it does not.
Every number names its analysis set (``reports/analysis.py``: the headline is the
primary arm, positive cases; routing stress and the model slice are their own arms) and
its stand-ins (``aces_bench/analysis/standin.py`` finds them, ``reports/standin.py``
names them): a value produced with the reference agent, the heuristic judge or an
offline model is marked "stand-in: not comparable with the paper" in the table, the
figures (hatched or hollow series) and the LaTeX captions. The side-by-side table, each
reported quantity next to the study's own, is built by the analysis
(``aces_bench.analysis.side_by_side``, in ``ReportSummary.side_by_side``) and only
written out here. The static-scan figures and tables of the page come from one scan,
with the study's rule profile, named. Nothing is fitted to the paper: its values are
only drawn and tabulated.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from aces_bench.agents.profiles import paper_harness  # the paper's harness labels (HarnessProfile.paper_label)
from aces_bench.core.outcomes import COMPOSITE, OUTCOME_ONLY, REWARD
from aces_bench.records.summary import SideBySide
from aces_bench.reports.figure_data import FigureData, FigureOutcome, PaperTables
from aces_bench.reports.figures import (
    _errs,
    _heatmap,
    _lift_bars,
    bar_style,
    integer_ticks,
    legend_below,
    log_ticks,
    method_text,
    model_sweep,
    paired_bars,
    plot_stress_lift,
    plot_stress_wall,
    set_caption,
    skill_harness_heatmap,
    static_vs_live,
    stress_axes,
)
from aces_bench.reports.labels import outcome_label
from aces_bench.reports.reported import REPORTED_FILE, ScanView, finite, load_reported  # noqa: F401 (the paper page's names)
from aces_bench.reports.standin import STAND_IN_MARK, stand_in_text
from aces_bench.reports.style import LIFT, OKABE_ITO, WITH_SKILL, Size, draw_sizes, new_figure

REPORTED_LABEL = "ACES paper, reported"
REPORTED_COLOR = OKABE_ITO.get("black", "#000000")


def _mark(ax, x, y, *, horizontal: bool = False) -> None:
    """The reported value as an open diamond."""
    kw = {"marker": "D", "s": 30, "facecolor": "white", "edgecolor": REPORTED_COLOR, "linewidth": 1.2, "zorder": 5}
    ax.scatter(y if horizontal else x, x if horizontal else y, **kw)


def _reported_handle() -> tuple:
    return (Line2D([], [], marker="D", markersize=5, markerfacecolor="white", markeredgecolor=REPORTED_COLOR,
                   linestyle="none"), REPORTED_LABEL)


def _study_handle(stand: list[str], color: str = WITH_SKILL) -> tuple:
    label = "this study" + (f" (hatched: {STAND_IN_MARK})" if stand else "")
    return (Patch(facecolor=color, **bar_style(stand)), label)


def _pooled(inp: FigureData) -> pd.DataFrame:
    return inp.stats.lift_pooled.frame().set_index("outcome")


def paper_metric_lift(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_metric_lift", "Metric lift: this study vs the ACES paper"
    paper = {**reported["headline_live"].get("metric_lift", {}),
             COMPOSITE: reported["headline_live"].get("composite_lift_mean"),
             OUTCOME_ONLY: reported["headline_live"].get("outcome_only_lift")}
    table = _pooled(inp)
    order = [o for o in ("skill_execution", "behavior_check", "skill_efficiency", "accuracy", "goal_accuracy",
                         "security", COMPOSITE, OUTCOME_ONLY) if o in table.index or o in paper]
    rows = table.reindex(order)
    stand = inp.tables.composite_stand_in
    labels = [f"{outcome_label(o)} (n={int(n)})" if n == n and n else f"{outcome_label(o)} (no pair)"
              for o, n in zip(order, rows["n"], strict=True)]

    def draw(size: Size):
        fig = new_figure(size.width, 1.0 + 0.28 * len(order))
        ax = fig.subplots()
        y = np.arange(len(order))[::-1]
        _lift_bars(ax, y, rows, stand)
        ys = [yi for yi, o in zip(y, order, strict=True) if finite(paper.get(o)) is not None]
        xs = [finite(paper[o]) for o in order if finite(paper.get(o)) is not None]
        if xs:
            _mark(ax, np.array(ys), np.array(xs), horizontal=True)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"lift, {inp.pct}% CI" if size.column else f"lift (with skill - baseline), {inp.pct}% CI")
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        legend_below(fig, [_study_handle(stand, LIFT), _reported_handle()], size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Bars: this study's mean paired lift with its {inp.pct}% CI "
                         f"({method_text(rows.dropna(subset=['lift']))}); open diamonds: the paper's reported lift "
                         f"({REPORTED_LABEL}). {set_caption(inp.headline, stand)}", paths)


def paper_harness_lift(inp: FigureData, paper_tables: PaperTables, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_harness_lift", "Composite lift per harness: this study vs the ACES paper"
    view = paper_tables.harness_composite
    table = view.table.frame()
    table = table.loc[table["n"] > 0].set_index("harness")
    paper = {paper_harness(r["harness"]): finite(r.get("lift")) for r in reported.get("by_harness", [])}
    names = sorted(set(table.index) | set(paper))
    if table.empty:
        return FigureOutcome(name, title, skipped="no harness has a scored composite pair")
    stand = view.stand_in
    rows = table.reindex(names)

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 2.2 + 0.9 * len(names)), 2.6)
        ax = fig.subplots()
        x = np.arange(len(names))
        lift = rows["lift"].astype(float).to_numpy()
        ax.bar(x, np.nan_to_num(lift), 0.6, color=WITH_SKILL, **bar_style(stand))
        has = rows["ci_lo"].notna().to_numpy()
        if has.any():
            ax.errorbar(x[has], lift[has], yerr=_errs(rows)[:, has], fmt="none", ecolor="black", elinewidth=0.8,
                        capsize=2)
        px = [i for i, h in enumerate(names) if paper.get(h) is not None]
        if px:
            _mark(ax, np.array(px), np.array([paper[names[i]] for i in px]))
        ax.axhline(0, color="black", linewidth=0.6)
        ticks = [h if np.isfinite(v) else f"{h}\n(not run)" for h, v in zip(names, lift, strict=True)]
        ax.set_xticks(x, ticks, rotation=30 if size.column else 0, ha="right" if size.column else "center")
        ax.set_ylabel(f"composite lift, {inp.pct}% CI")
        legend_below(fig, [_study_handle(stand), _reported_handle()], size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Bars: this study's composite lift per harness with its {inp.pct}% CI "
                         f"({method_text(table)}); open diamonds: {REPORTED_LABEL} (by_harness). "
                         f"{set_caption(view.description, stand)}", paths)


def paper_harness_reward(paper_tables: PaperTables, out: Path) -> FigureOutcome:
    """The paper's Fig. 10(a): mean verifier reward with and without the skill, per harness."""
    return paired_bars(paper_tables.harness_reward, out, "paper_harness_reward", "Verifier reward with and without "
                       "the skill per harness (the paper's Fig. 10(a))", REWARD,
                       extra_caption="The paper gives no per-harness reward values in its text, so there is no "
                       "reported overlay. ", min_harnesses=1)


def paper_harness_model_heatmap(inp: FigureData, out: Path) -> FigureOutcome:
    name, title = "paper_harness_model_heatmap", f"{outcome_label(inp.outcome)} lift by harness and model"
    cells = inp.tables.cells
    table, stand = cells.table.frame(), cells.stand_in
    if table.empty or not (table["n"] > 0).any():
        return FigureOutcome(name, title, skipped="no (harness, model) cell has a scored pair")
    paths = _heatmap(inp, table, "harness", "model", out, name, title, "not run", stand,
                     f"{outcome_label(inp.outcome).lower()} lift")
    return FigureOutcome(name, title, "Mean paired lift per (harness, model); n = scored pairs. The paper reports no "
                         f"per-cell values, so no reported overlay. {set_caption(cells.description, stand)}", paths)


def paper_routing_stress(inp: FigureData, paper_tables: PaperTables, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_routing_stress", "Routing stress: composite lift and wall time vs visible skills"
    rs = reported.get("routing_stress", {})
    if paper_tables.stress is None:
        return FigureOutcome(name, title, skipped="the trials table has no n_visible_skills column")
    s, wall = paper_tables.stress.lift, pd.Series(paper_tables.stress.wall, dtype=float)
    table = s.table.frame()
    if len(table) < 2:
        return FigureOutcome(name, title, skipped="every with-skill trial saw the same number of skills")
    stand = s.stand_in
    hollow = {"markerfacecolor": "white"} if stand else {}
    x = table["visible"].astype(int).tolist()
    band = rs.get("lift_range_1_to_20")
    paper_wall = {int(k): finite(v) for k, v in (rs.get("mean_wall_seconds") or {}).items()}

    def draw(size: Size):
        fig = new_figure(size.width, 2.5 if not size.column else 4.3)
        ax, ax2 = stress_axes(fig, size)
        plot_stress_lift(ax, x, table, **hollow)
        entries = [(Line2D([], [], marker="o", color=LIFT, **hollow),
                    "this study" + (f" (hollow: {STAND_IN_MARK})" if stand else ""))]
        if band and len(band) == 2:
            ax.fill_between([1, 20], [band[0]] * 2, [band[1]] * 2, color=REPORTED_COLOR, alpha=0.2, linewidth=0)
            entries.append((Patch(color=REPORTED_COLOR, alpha=0.2), f"{REPORTED_LABEL}: lift range, 1-20 skills"))
        ax.axhline(0, color="black", linewidth=0.6)
        log_ticks(ax, x)
        ax.set_xlim(min(0.8, x[0] / 1.35), x[-1] * 1.35)
        ax.set_xlabel("skills the agent saw (log scale)")
        ax.set_ylabel(f"composite lift, {inp.pct}% CI")
        ax.set_title("(a) lift", loc="left")
        plot_stress_wall(ax2, wall, "(b) this study's wall time", **hollow)
        legend_below(fig, entries, size, ncols=1 if size.column else 2)
        return fig

    paths = draw_sizes(draw, out, name)
    walls = ", ".join(f"{v:g} s at {k}" for k, v in sorted(paper_wall.items()) if v is not None)
    caption = (f"(a) Composite lift (the paper's statistic) per number of skills the agent saw (target, decoys and "
               f"any skills of the harness's own it kept), each level computed as the headline is "
               f"({method_text(table)}); shaded: {REPORTED_LABEL} lift range for 1-20 skills. (b) This study's mean "
               f"with-skill wall time on its own scale")
    caption += f"; {REPORTED_LABEL}: {walls} (another agent and machine, not drawn on this scale)." if walls else "."
    caption += f" {set_caption(s.description, stand)}" + ("" if len(wall) else " Wall time was not recorded.")
    return FigureOutcome(name, title, caption, paths)


def paper_scan_histogram(scan: ScanView | None, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_scan_histogram", "Tier 1 structural scores of the study's skills"
    ss = reported.get("static_scan", {}).get("structural_score", {})
    if scan is None or not scan.scores:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    scores = scan.scores
    gate = reported.get("static_scan", {}).get("default_gate", 70)

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 5.0), 2.4)
        ax = fig.subplots()
        ax.hist(scores, bins=np.arange(0, 102, 2), color=WITH_SKILL, edgecolor="white")
        ax.axvline(gate, color="black", linestyle=":", linewidth=0.8)
        entries = [(Patch(color=WITH_SKILL), f"this study ({scan.profile} profile)"),
                   (Line2D([], [], color="black", linestyle=":"), f"gate {gate}")]
        if finite(ss.get("mean")) is not None:
            ax.axvline(ss["mean"], color=REPORTED_COLOR, linewidth=1.2)
            entries.append((Line2D([], [], color=REPORTED_COLOR), f"{REPORTED_LABEL}: mean {ss['mean']:g}"))
        if ss.get("min") is not None and ss.get("max") is not None:
            ax.axvspan(ss["min"], ss["max"], color=REPORTED_COLOR, alpha=0.08)
            entries.append((Patch(color=REPORTED_COLOR, alpha=0.08), f"{REPORTED_LABEL}: range"))
        ax.set_xlim(max(0, min(min(scores), ss.get("min", 100), gate) - 5), 100)
        integer_ticks(ax.yaxis)
        ax.set_xlabel("structural score (0-100)")
        ax.set_ylabel("skills")
        legend_below(fig, entries, size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Histogram of this study's Tier 1 scores (rule profile: {scan.profile}; the "
                         f"same scan as the static-scan rows of the table); line and band: {REPORTED_LABEL} mean and "
                         f"range over its {reported.get('static_scan', {}).get('n_skills', '?')} skills.", paths)


def paper_top_violations(scan: ScanView | None, out: Path) -> FigureOutcome:
    name, title = "paper_top_violations", "Top rule violations: share of skills"
    rows = scan.violations if scan is not None else []
    if not rows:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    labels = [r["reported_label"] + ("" if r["ours"] is not None else " (not in profile)") for r in rows]

    def draw(size: Size):
        import textwrap

        wrapped = [textwrap.fill(x, 20 if size.column else 60) for x in labels]
        fig = new_figure(size.width, 1.0 + (0.42 if size.column else 0.3) * len(rows))
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        ours = np.array([r["ours"] if r["ours"] is not None else np.nan for r in rows], dtype=float)
        ax.barh(y, np.nan_to_num(ours), 0.6, color=WITH_SKILL)
        paper = np.array([r["reported"] for r in rows], dtype=float)
        for yi, v, pv in zip(y, ours, paper, strict=True):
            if np.isfinite(v):
                ax.text(max(v, np.nan_to_num(pv)) + 0.04, yi, f"{100 * v:.0f}%", va="center")
        _mark(ax, y, paper, horizontal=True)
        ax.set_yticks(y, wrapped)
        ax.set_xlim(0, 1.3)
        ax.set_xticks([0, 0.5, 1.0], ["0%", "50%", "100%"])
        ax.set_xlabel("share of skills violating the rule")
        ax.grid(axis="y", visible=False)
        legend_below(fig, [(Patch(color=WITH_SKILL), f"this study ({scan.profile} profile)"), _reported_handle()],
                     size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    missing = [r["reported_label"] for r in rows if r["ours"] is None]
    note = (f" Not checked by the {scan.profile} profile (no bar): {', '.join(missing)}." if missing else "")
    return FigureOutcome(name, title, f"The rules the paper names; bars: this study's skills (rule profile: "
                         f"{scan.profile}), open diamonds: {REPORTED_LABEL}.{note}", paths)


def paper_structural_vs_judge(inp: FigureData, paper_tables: PaperTables, reported: dict, out: Path
                              ) -> FigureOutcome:
    """The paper's Fig. 1(b): Tier 1 structural score against the Tier 2 LLM-judge score."""
    name, title = "paper_structural_vs_judge", "Structural vs LLM-judge scores (the paper's Fig. 1(b))"
    sec = inp.static
    if sec is None or sec.status != "ran":
        return FigureOutcome(name, title, skipped=f"no static scan ran ({sec.reason if sec is not None else 'none'})")
    both = [k for k in sec.skills if k.structural is not None and k.rubric is not None]
    if not both:
        return FigureOutcome(name, title, skipped=f"no Tier 2 (LLM-judge) score: {sec.tier2_status}")
    x = np.array([k.structural for k in both], dtype=float)
    y = np.array([k.rubric for k in both], dtype=float)
    corr = paper_tables.structural_vs_judge
    paper = reported.get("static_scan", {}).get("structural_vs_llm_judge", {})

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 4.0), 2.8)
        ax = fig.subplots()
        ax.scatter(x, y, s=24, color=WITH_SKILL, edgecolor="black", linewidth=0.5)
        ax.set_xlabel("Tier 1 structural score (0-100)")
        ax.set_ylabel("Tier 2 LLM-judge score (0-100)")
        rho = "undefined" if corr.rho is None else f"{corr.rho:+.2f}"
        ax.set_title(f"Spearman rho {rho}, n = {corr.n}; paper: {paper.get('spearman', 'n/a')}", loc="left")
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"One point per scanned target skill (rule profile: {sec.profile}; judge: "
                         f"{sec.tier2_status}). {REPORTED_LABEL}: Spearman {paper.get('spearman', 'n/a')}, Pearson "
                         f"{paper.get('pearson', 'n/a')} over its corpus.", paths)


def draw_paper(inp: FigureData, paper_tables: PaperTables, reported: dict, out_dir: Path) -> list[FigureOutcome]:
    """Every paper figure, in the paper's order; skipped ones carry their reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    scan = paper_tables.scan
    return [paper_structural_vs_judge(inp, paper_tables, reported, out_dir), paper_metric_lift(inp, reported, out_dir),
            skill_harness_heatmap(inp, out_dir), paper_harness_lift(inp, paper_tables, reported, out_dir),
            paper_harness_reward(paper_tables, out_dir), paper_harness_model_heatmap(inp, out_dir),
            paper_routing_stress(inp, paper_tables, reported, out_dir), model_sweep(inp, out_dir),
            static_vs_live(inp, out_dir), paper_scan_histogram(scan, reported, out_dir),
            paper_top_violations(scan, out_dir)]


PAPER_DIR = "paper"


def _frame(rows: list[SideBySide]) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows], columns=list(SideBySide.model_fields))
    frame["n"] = frame["n"].astype("Int64")
    return frame


def side_by_side_csv_frame(rows: list[SideBySide]) -> pd.DataFrame:
    """The side-by-side as its CSV writes it: a count as an integer (145 skills scanned, not
    145.0000; the LaTeX table's rule, ``value_cells``), every other value to 4 decimals."""
    from aces_bench.reports.latex import value_cells

    frame = _frame(rows)
    for col in ("reported", "study"):
        frame[col] = frame[col].astype(object)
    for i, r in enumerate(rows):
        cells = value_cells(r.quantity, r.section, [r.reported, r.study])
        for col, v, c in (("reported", r.reported, cells[0]), ("study", r.study, cells[1])):
            if v is None or pd.isna(v):
                frame.at[frame.index[i], col] = None
            else:
                frame.at[frame.index[i], col] = str(c) if "." not in str(c) else f"{float(v):.4f}"
    return frame


def write_paper_page(out: Path, inp: FigureData, paper_tables: PaperTables, rows: list[SideBySide], *,
                     nav: list[dict]) -> Path:
    """``<report>/paper.html`` with every paper figure, ``paper/side_by_side.{csv,json}``,
    ``tables/side_by_side.tex`` and ``tables/corpus_by_category.tex``, from the tables, the
    scan and the rows the analysis built (``aces_bench.analysis.figure_data.paper_tables``,
    ``aces_bench.analysis.side_by_side``)."""
    from aces_bench.core.io import write_frame, write_json, write_text
    from aces_bench.reports.html import environment, relative, render, svg_data_uri
    from aces_bench.reports.latex import write_paper_tables

    reported = paper_tables.reported
    scan = paper_tables.scan
    figures = draw_paper(inp, paper_tables, reported, out / PAPER_DIR)
    write_frame(out / PAPER_DIR / "side_by_side.csv", side_by_side_csv_frame(rows))
    stand = inp.tables.composite_stand_in
    write_json(out / PAPER_DIR / "side_by_side.json", {"reported_source": reported.get("source"),
                                                      "label": REPORTED_LABEL, "analysis_set": inp.headline,
                                                      "stand_in": stand, "rows": rows})
    tex = write_paper_tables(out / "tables", rows, stand, inp.headline, inp.study_trials, scan, reported)
    views = [{"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
              "data_uri": svg_data_uri(f.svg) if f.svg else "",
              "files": [(fmt, relative(p, out)) for fmt, p in sorted(f.paths.items())]} for f in figures]
    html = render(environment(), "paper.html.j2", title="The ACES paper's figures from this study", root="",
                  nav_skills=nav, figures=views, rows=rows, label=REPORTED_LABEL, source=reported.get("source"),
                  note=reported.get("note"), scan_note=(scan.comparison.get("note") if scan else None),
                  stand_in=stand_in_text(stand), analysis_set=inp.headline, paper_href="paper.html",
                  profile=scan.profile if scan else None, categories=scan.categories if scan else [],
                  tex=[relative(p, out) for p in tex])
    return write_text(out / "paper.html", html)
