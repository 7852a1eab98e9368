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

from markupsafe import Markup

from aces_bench.io import write_text
from aces_bench.reports.html import environment as html_environment
from aces_bench.reports.html import render
from aces_bench.reports.latex import environment as tex_environment
from aces_bench.reports.latex import tex_escape
from aces_bench.reports.summary import ReportSummary

APPENDIX_HTML = "appendix.html"
APPENDIX_TEX = "appendix.tex"


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def _f(x, digits: int = 3, signed: bool = True) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _ci(lo, hi) -> str:
    return "n/a" if lo is None or hi is None else f"[{lo:+.3f}, {hi:+.3f}]"


def _p(x) -> str:
    return "n/a" if x is None else (f"{x:.3g}" if x >= 0.001 else "<0.001")


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
        f"Source: {summary.source}. Skill Lift on the outcome \"{o}\" is the mean paired difference, score with the "
        f"skill minus score without it, over pairs matched on case, attempt, harness, model, workspace mode and decoy "
        f"set. The estimand is taken over positive cases (the cases each skill is meant for): "
        f"{head.n if head else 0} scored pairs in {head.n_cases if head and head.n_cases else 0} cases across "
        f"{len(skills)} skill(s). Negative-control cases ({n_controls} scored pair(s)) are reported apart as a "
        f"false-activation rate. {summary.counts.n_trials} trials were recorded, {summary.counts.n_ok} of them ok.")
    out.append(design)

    inf = Section("Unit of inference and intervals",
                  header=["Clustering", "Estimate", f"{level}% CI", "Clusters", "df", "Design effect"])
    inf.paragraphs.append(
        "Cases are the clusters: a case's attempts, harnesses, models and configurations share its difficulty and are "
        "not independent. Intervals are cluster-robust (sandwich, CR1 small-sample factor G/(G-1), statsmodels OLS on a "
        "constant with cov_type=\"cluster\") with a t reference distribution on G - 1 degrees of freedom; with five "
        "or more configurations pooled, the headline is two-way clustered by case and configuration (Cameron, Gelbach "
        "and Miller) with min(G1, G2) - 1 degrees of freedom. With one pair per case this is the paired t interval. "
        "Intervals past the feasible range [-1, 1] are clipped and say so; no observed variation gives no interval.")
    rows = [r for r in (st.inference.rows if st.inference else []) if r["outcome"] == o]
    for r in rows:
        clusters = str(r["n_clusters"]) + (f" x {r['n_clusters_2']}" if r.get("n_clusters_2") else "")
        inf.rows.append([r["clustering"] + (" (headline)" if r["headline"] else ""), _f(r["estimate"]),
                         _ci(r["ci_lo"], r["ci_hi"]) if r["ci_lo"] is not None else (r["note"] or "n/a"),
                         clusters, str(r["df"]) if r["df"] is not None else "n/a",
                         _f(r["design_effect"], 2, signed=False)])
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
                   header=["Skill", "Pairs", "Cases", "Lift", f"{level}% CI", "Adjusted CI", "p (sign-flip)",
                           "Holm", "BH"])
    sig = {r.get("skill"): r for r in st.significance.rows}
    adjustment = next((r.adjustment for r in skills if r.adjustment), None)
    method = sorted({r["perm_method"] for r in st.significance.rows if r.get("perm_method")})
    mult.paragraphs.append(
        f"Each skill's interval is clustered by case. With {len(skills)} skills the per-skill interval used for a "
        f"claim (and by the lower-bound gate) is {adjustment or 'unadjusted (one skill)'}. Tests per skill: exact sign "
        f"test; sign-flip permutation test of the mean ({', '.join(method) or 'not run'}; exact up to 20 pairs, "
        f"Monte Carlo with a seed per skill beyond); Wilcoxon signed-rank; McNemar's exact test on paired pass/fail. "
        f"p-values are adjusted across skills by Holm (family-wise error) and Benjamini-Hochberg (false discovery rate).")
    for r in skills:
        t = sig.get(r.group.get("skill"), {})
        mult.rows.append([r.group.get("skill", ""), str(r.n), str(r.n_cases or 0), _f(r.lift),
                          _ci(r.ci_lo, r.ci_hi) if r.ci_lo is not None else (r.ci_note or "n/a"),
                          _ci(r.adj_ci_lo, r.adj_ci_hi), _p(t.get("p_perm")), _p(t.get("p_perm_holm")),
                          _p(t.get("p_perm_bh"))])
    out.append(mult)

    power = Section("Design power", header=["Outcome", "Pairs", "Cases", "SD", "Design effect", "MDL", "Cases needed"])
    for r in st.design_power.rows:
        if r["outcome"] != o:
            continue
        power.rows.append([r["outcome"], str(r["n"]), str(r.get("n_cases", "")), _f(r["sd"], signed=False),
                           _f(r.get("design_effect"), 2, signed=False), _f(r["mde"], signed=False),
                           str(r["n_needed"]) if r["n_needed"] is not None else (r.get("note") or "n/a")])
        power.paragraphs.append(
            f"Minimum detectable lift (two-sided alpha = {r['alpha']}, power = {r['power']}) from the observed SD and "
            f"the estimated design effect; cases needed for a true lift of {r['target_lift']} at the observed pairs "
            f"per case. Zero observed variance gives no plan.")
    out.append(power)

    miss = Section("Missingness", header=["Bound", "Lift", f"{level}% CI", "Imputed sides"])
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
        miss.rows.append(["observed", _f(b["lift_observed"]), "", "0"])
        miss.rows.append(["worst case for the skill", _f(b["lift_lower"]), _ci(b["ci_lo_lower"], b["ci_hi_lower"]), imputed])
        miss.rows.append(["best case for the skill", _f(b["lift_upper"]), _ci(b["ci_lo_upper"], b["ci_hi_upper"]), imputed])
    ab = st.missingness.abstentions.rows if st.missingness.abstentions else []
    if ab:
        miss.paragraphs.append("Sub-checks left undecided by the grader or judge: " + "; ".join(
            f"{r['metric']} ({r['condition'].replace('_', ' ')}) {r['n_undecided']} of {r['n_checks']}" for r in ab)
            + ".")
    out.append(miss)

    fa = st.false_activation.rows if st.false_activation else []
    if fa:
        ctrl = Section("Negative controls", header=["Skill", "Activated", "Known", "Rate", f"{level}% Wilson CI"])
        ctrl.paragraphs.append("False activation: with-skill trials on negative-control cases that activated the "
                               "target skill (grader's activation check, else the trajectory); unknown left out.")
        for r in fa:
            ctrl.rows.append([r["skill"], str(r["n_activated"]), str(r["n_known"]), _f(r["rate"], signed=False),
                              _ci(r["ci_lo"], r["ci_hi"])])
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


def render_tex(secs: list[Section]) -> str:
    env = tex_environment()
    parts = ["% Statistics appendix generated by aces-bench; \\input{} it from a document that loads booktabs.\n"]
    for s in secs:
        parts.append(f"\\subsection*{{{tex_escape(s.title)}}}\n")
        for p in s.paragraphs:
            parts.append(tex_escape(p) + "\n\n")
        if s.rows:
            colspec = "l" + "r" * (len(s.header) - 1)
            parts.append(env.get_template("table.tex.j2").render(
                caption=s.title, label=Markup("tab:aces-appendix-" + "-".join(s.title.lower().split()[:2])),
                colspec=Markup(colspec), header=s.header, rows=s.rows, note=""))
    return "".join(parts)


def write_appendix(out_dir: Path, summary: ReportSummary, *, has_triage: bool = True) -> tuple[Path, Path]:
    """Write ``appendix.html`` and ``tables/appendix.tex``; returns their paths."""
    secs = sections(summary)
    html = render(html_environment(), "appendix.html.j2", title=f"Statistics appendix: {summary.source}", root="",
                  nav_skills=[], sections=secs, has_triage=has_triage)
    return write_text(out_dir / APPENDIX_HTML, html), write_text(out_dir / "tables" / APPENDIX_TEX, render_tex(secs))
