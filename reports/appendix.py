"""A paper-style statistics appendix, in HTML and LaTeX, from the report summary.

One list of sections (paragraphs and small tables, every number read from the
``ReportSummary``) is rendered twice: ``appendix.html`` next to index.html and
``tables/appendix.tex`` (a fragment to ``\\input`` into a paper; booktabs). The text says
what was computed for this study, not what the method usually finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from aces_bench.core.io import write_text
from aces_bench.records.summary import ReportSummary
from aces_bench.reports.html import environment as html_environment
from aces_bench.reports.html import render
from aces_bench.reports.labels import outcome_label, p_text
from aces_bench.reports.latex import ADJ, Col, ci_cols, tex_escape, who
from aces_bench.reports.latex import environment as tex_environment
from aces_bench.reports.latex import table as latex_table

APPENDIX_HTML = "appendix.html"
APPENDIX_TEX = "appendix.tex"


@dataclass
class Section:
    """Paragraphs and at most one table of typed cells (``latex.Col`` kinds), so the HTML and
    the LaTeX show the same numbers, each typeset as its column says."""

    title: str
    paragraphs: list[str] = field(default_factory=list)
    cols: list[Col] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    tables: list[Section] = field(default_factory=list)  # further tables of the same section

    @property
    def header(self) -> list[str]:
        return [f"{c.group} {c.header}" if c.group else c.header for c in self.cols]

    def html_rows(self) -> list[list[str]]:
        return [[html_cell(c, v) for c, v in zip(self.cols, r, strict=True)] for r in self.rows]


def html_cell(col: Col, value) -> str:
    """A typed cell as the HTML appendix shows it."""
    if value is None or (isinstance(value, float) and value != value):
        return "n/a" if col.kind in ("signed", "num", "count", "pct", "p") else ""
    if col.kind == "signed":
        return f"{float(value):+.{col.digits}f}"
    if col.kind == "num":
        return f"{float(value):.{col.digits}f}"
    if col.kind == "count":
        return str(int(value))
    if col.kind == "pct":
        return f"{100 * float(value):.0f}%"
    if col.kind == "p":
        return p_text(float(value))
    return str(value)


def _f(x, digits: int = 3, signed: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _ci(lo, hi) -> str:
    return "n/a" if lo is None or hi is None else f"[{lo:+.3f}, {hi:+.3f}]"


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def sections(summary: ReportSummary) -> list[Section]:
    st = summary.stats
    o = summary.headline_outcome
    level = int(round(100 * st.settings.level))
    head = next((r for r in summary.pooled if r.outcome == o), None)
    skills = [r for r in summary.by_skill if r.outcome == o]
    out = []

    design = Section("Design and estimand")
    n_controls = sum(r["n"] or 0 for r in (st.negative_controls.rows if st.negative_controls else [])
                     if r["outcome"] == o)
    design.paragraphs.append(
        f"Source: {summary.source}. Skill Lift on the {outcome_label(o).lower()} is the mean paired difference, score "
        f"with the skill minus score without it, over pairs matched on case, attempt, harness, model, workspace mode "
        f"and decoy set. Analysis set: {summary.analysis_set or 'every trial of the study'}; every other arm of the "
        f"study is reported apart. The estimand is taken over positive cases (the cases each skill is meant for): "
        f"{head.n if head else 0} scored pairs in {head.n_cases if head and head.n_cases else 0} cases across "
        f"{len(skills)} skill(s). Negative-control cases ({n_controls} scored pair(s)) are reported apart as a "
        f"false-activation rate. {summary.counts.n_trials} trials were recorded, {summary.counts.n_ok} of them ok.")
    out.append(design)

    inf = Section("Unit of inference and intervals",
                  cols=[Col("Clustering", "wide"), Col("Estimate", "signed"), *ci_cols(level), Col("Clusters"),
                        Col("df", "num", 1), Col("Design eff.", "num", 2)])
    inf.paragraphs.append(
        "Cases are the clusters: a case's attempts, harnesses, models and configurations share its difficulty and are "
        "not independent. Intervals are cluster-robust (sandwich with the CR2 small-sample correction, Bell and McCaffrey; "
        "Pustejovsky and Tipton 2018) with a t reference distribution on Bell-McCaffrey degrees of freedom: with equal "
        "cluster sizes CR1's G/(G-1) factor and G - 1 df exactly, fewer df with few or unbalanced clusters; with five "
        "or more configurations pooled, the headline is two-way clustered by case and configuration (Cameron, Gelbach "
        "and Miller) with min(G1, G2) - 1 degrees of freedom. With one pair per case this is the paired t interval. "
        "Intervals past the feasible range [-1, 1] are clipped and say so; no observed variation (every case's mean the "
        "same) gives no interval, never a zero-width one.")
    rows = [r for r in (st.inference.rows if st.inference else []) if r["outcome"] == o]
    notes = []
    for r in rows:
        clusters = str(r["n_clusters"]) + (f" x {r['n_clusters_2']}" if r.get("n_clusters_2") else "")
        inf.rows.append([r["clustering"] + (" (headline)" if r["headline"] else ""), r["estimate"], r["ci_lo"],
                         r["ci_hi"], clusters, r["df"], r["design_effect"]])
        if r["ci_lo"] is None and r.get("note"):
            notes.append(f"{r['clustering']}: {r['note']}")
    if notes:
        inf.paragraphs.append("No interval (n/a in the table): " + "; ".join(notes) + ".")
    case = next((r for r in rows if r["clustering"] == "case"), None)
    if case and case["design_effect"]:
        inf.paragraphs.append(
            f"The design effect of clustering by case is {case['design_effect']:.2f}: the variance of the mean is "
            f"{case['design_effect']:.2f} times what treating the {case['n']} pairs as independent would claim, so the "
            f"effective sample size is about {case['n'] / case['design_effect']:.0f} pairs.")
    boots = [b for b in st.bootstrap.rows if b["outcome"] == o]
    if boots:
        inf.paragraphs.append("Percentile cluster bootstraps (" + f"{st.settings.n_resamples} resamples, seed "
                              f"{st.settings.seed}): " + "; ".join(
                                  f"resampling {b['resampled']}: {_ci(b['ci_lo'], b['ci_hi'])}" for b in boots) + ".")
    out.append(inf)

    mult = Section("Per-skill claims and multiplicity",
                   cols=[Col("Skill", "wide"), Col("Pairs", "count"), Col("Cases", "count"), Col("Lift", "signed"),
                         *ci_cols(level), *ADJ])
    tests = Section("Per-skill tests", cols=[Col("Skill", "wide"), Col("Cases", "count"), Col("Sign", "p"),
                                             Col("Sign-flip", "p"), Col("Wilcoxon", "p"), Col("McNemar", "p"),
                                             Col("Holm", "p"), Col("BH", "p")])
    sig = {r.get("skill"): r for r in st.significance.rows}
    adjustment = next((r.adjustment for r in skills if r.adjustment), None)
    method = sorted({r["perm_method"] for r in st.significance.rows if r.get("perm_method")})
    mult.paragraphs.append(
        f"Each skill's interval is clustered by case. With {len(skills)} skills the per-skill interval used for a "
        f"claim (and by the lower-bound gate) is {adjustment or 'unadjusted (one skill)'}; n/a: no interval "
        f"(no variation observed, or one pair). Tests per skill take the distinct case as the unit, as the intervals "
        f"do (each case's lift is the mean of its pairs, so no p-value is below 2/2^k for k cases): exact sign test; "
        f"sign-flip permutation test of the mean ({', '.join(method) or 'not run'}; exact up to 20 cases, Monte Carlo "
        f"with a seed per skill beyond); Wilcoxon signed-rank; McNemar's exact test by case (the sign test of each "
        f"case's pass difference). The sign-flip p-values are adjusted across skills by Holm (family-wise error) and "
        f"Benjamini-Hochberg (false discovery rate).")
    for r in skills:
        t = sig.get(r.group.get("skill"), {})
        mult.rows.append([r.group.get("skill", ""), r.n, r.n_cases or 0, r.lift, r.ci_lo, r.ci_hi, r.adj_ci_lo,
                          r.adj_ci_hi])
        tests.rows.append([r.group.get("skill", ""), t.get("n_cases"), t.get("p_sign"), t.get("p_perm"),
                           t.get("p_wilcoxon"), t.get("p_mcnemar"), t.get("p_perm_holm"), t.get("p_perm_bh")])
    mult.tables.append(tests)
    out.append(mult)

    power = Section("Design power", cols=[Col("Outcome", "wide"), Col("Pairs", "count"), Col("Cases", "count"),
                                          Col("SD", "num"), Col("Design eff.", "num", 2), Col("MDL", "num"),
                                          Col("Cases needed", "count")])
    for r in st.design_power.rows:
        if r["outcome"] != o:
            continue
        power.rows.append([outcome_label(r["outcome"]), r["n"], r.get("n_cases"), r["sd"], r.get("design_effect"),
                           r["mde"], r["n_needed"]])
        if r["n_needed"] is None and r.get("note"):
            power.paragraphs.append(f"No plan (n/a): {r['note']}.")
        power.paragraphs.append(
            f"Minimum detectable lift (two-sided alpha = {r['alpha']}, power = {r['power']}) from the observed SD and "
            f"the estimated design effect; cases needed for a true lift of {r['target_lift']} at the observed pairs "
            f"per case. Zero observed variance gives no plan.")
    out.append(power)

    miss = Section("Missingness", cols=[Col("Bound", "wide"), Col("Lift", "signed"), *ci_cols(level), Col("Imputed sides")])
    sc = {(r["condition"], r["outcome"]): r for r in st.missingness.scored_by_condition.rows}
    arms = [f"{c.replace('_', ' ')}: {sc[(c, o)]['n_scored']} of {sc[(c, o)]['n_rows']} scored" for c in
            ("with_skill", "baseline") if (c, o) in sc]
    miss.paragraphs.append(
        f"Lift uses pairs scored on both sides; failed, timed-out and unscored trials are counted, never scored 0 "
        f"({'; '.join(arms)}). {summary.counts.n_one_sided} pair key(s) are scored on one side only and "
        f"{summary.counts.n_neither} on neither. Two-sided bounds impute every unscored side at the worst value for "
        f"the skill (with skill 0, baseline 1) and at the best (with skill 1, baseline 0).")
    b = next((r for r in (st.missingness.bounds.rows if st.missingness.bounds else []) if r["outcome"] == o), None)
    if b:
        imputed = f"{b['n_imputed_with']} with, {b['n_imputed_base']} baseline"
        miss.rows.append(["observed", b["lift_observed"], None, None, "none"])
        miss.rows.append(["worst case for the skill", b["lift_lower"], b["ci_lo_lower"], b["ci_hi_lower"], imputed])
        miss.rows.append(["best case for the skill", b["lift_upper"], b["ci_lo_upper"], b["ci_hi_upper"], imputed])
    ab = st.missingness.abstentions.rows if st.missingness.abstentions else []
    if ab:
        miss.paragraphs.append("Sub-checks left undecided by the grader or judge: " + "; ".join(
            f"{r['metric']} ({r['condition'].replace('_', ' ')}) {r['n_undecided']} of {r['n_checks']}" for r in ab)
            + ".")
    out.append(miss)

    fa = st.false_activation.rows if st.false_activation else []
    if fa:
        ctrl = Section("Negative controls", cols=[Col("Skill", "wide"), Col("Activated", "count"),
                                                  Col("Known", "count"), Col("Rate", "num"),
                                                  Col("low", "num", group="95% Wilson"),
                                                  Col("high", "num", group="95% Wilson")])
        ctrl.paragraphs.append("False activation: with-skill trials on negative-control cases that activated the "
                               "target skill (grader's activation check, else the trajectory); unknown left out.")
        for r in fa:
            ctrl.rows.append([r["skill"], r["n_activated"], r["n_known"], r["rate"], r["ci_lo"], r["ci_hi"]])
        out.append(ctrl)

    routing = [r for r in st.routing_pooled.rows if r.get("n_matched")]
    if routing:
        r = routing[0]
        out.append(Section("Routing premium", [
            f"Group-workspace lift minus isolation lift, paired by case and attempt ({r['n_matched']} matched pairs, "
            f"{r['n_clusters']} cases): {_f(r['premium'])}, {level}% CI {_ci(r['ci_lo'], r['ci_hi'])} "
            f"({r.get('method') or r.get('note') or ''})."]))

    out.append(Section("Software", [
        f"aces-bench {_version('aces-bench')}; statsmodels {_version('statsmodels')}; scipy {_version('scipy')}; "
        f"numpy {_version('numpy')}; pandas {_version('pandas')}."]))
    return out


def render_tex(secs: list[Section], summary: ReportSummary | None = None) -> str:
    env = tex_environment()
    parts = ["% Statistics appendix generated by aces-bench; \\input{} it from a document that loads booktabs,\n"
             "% siunitx and tabularx.\n"]
    level = int(round(100 * summary.stats.settings.level)) if summary is not None else 95
    for s in secs:
        parts.append(f"\\subsection*{{{tex_escape(s.title)}}}\n")
        for p in s.paragraphs:  # prose with long tokens (methods, intervals) breaks loosely, never overfull
            parts.append("{\\sloppy " + tex_escape(p) + "\\par}\n\n")
        for t in [s, *s.tables]:
            if not t.rows:
                continue
            key = "-".join(t.title.lower().split()[:2])
            caption = f"{t.title}. Set: {summary.analysis_set if summary is not None and summary.analysis_set else 'the study'}."
            if any(c.group.endswith("CI") for c in t.cols):
                caption += f" {level}% CI as in the text; n/a: no interval."
            if summary is not None:
                caption += f" {who(summary)}"
            parts.append(latex_table(env, caption=caption, short=t.title, label=f"tab:aces-appendix-{key}",
                                     cols=t.cols, rows=t.rows))
    return "".join(parts)


def write_appendix(out_dir: Path, summary: ReportSummary, *, has_triage: bool = True) -> tuple[Path, Path]:
    """Write ``appendix.html`` and ``tables/appendix.tex``; returns their paths."""
    secs = sections(summary)
    html = render(html_environment(), "appendix.html.j2", title=f"Statistics appendix: {summary.source}", root="",
                  nav_skills=[], sections=secs, has_triage=has_triage)
    return write_text(out_dir / APPENDIX_HTML, html), write_text(out_dir / "tables" / APPENDIX_TEX,
                                                                render_tex(secs, summary))
