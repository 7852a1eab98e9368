"""LaTeX tables (booktabs) for a paper: headline, per metric, evidence, coverage, dimensions.

Rendered through jinja2 with LaTeX-safe delimiters (``\\BLOCK{...}``, ``\\VAR{...}``) so
the template's own braces are plain LaTeX. Every value is escaped on output
(``& % $ # _ { } ~ ^ \\`` and ``< > |``) unless it is ``Markup`` built here from numbers,
so a skill or model name can never break (or inject into) the document.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import jinja2
from markupsafe import Markup

from aces_bench.io import write_text
from aces_bench.metrics import metric_names
from aces_bench.reports.dimensions import dimensions_of, mapping
from aces_bench.reports.inventory import CoverageRow, InventoryItem
from aces_bench.reports.summary import LiftRow, ReportSummary
from aces_bench.stats.pairing import COMPOSITE, OUTCOME, OUTCOME_ONLY, OUTCOME_PER_PROTOCOL, REWARD

TEMPLATES = Path(__file__).parent / "templates"
_TEX_SPECIAL = {
    # Math-mode and accent forms need only the base CM fonts (no TS1/textcomp bitmaps).
    "\\": r"$\backslash$", "&": r"\&", "%": r"\%", "$": r"$\$$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\~{}", "^": r"\^{}",
    "<": r"$<$", ">": r"$>$", "|": r"$|$",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))
_NON_ASCII = re.compile(r"[^\x20-\x7e]")
TABLE_FILES = ("verdict", "headline", "metrics", "pass_rates", "inventory", "coverage", "dimensions")
DOCUMENT = "tables.tex"


def tex_escape(value: object) -> str:
    """Plain text made safe to typeset in LaTeX (every special character escaped).

    Characters outside printable ASCII become ``?``: pdflatex stops on a Unicode
    character it has no definition for, and names are identifiers, not prose.
    """
    text = "" if value is None else str(value)
    text = _NON_ASCII.sub("?", text)
    return _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group(0)], text)


def _finalize(value: object) -> object:
    return value if isinstance(value, Markup) else tex_escape(value)


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=True,
        finalize=_finalize, undefined=jinja2.StrictUndefined,
    )


def num(x: float | None, *, signed: bool = False, digits: int = 3) -> Markup:
    """A number in math mode (a true minus sign), or an en dash when undefined."""
    if x is None or math.isnan(x):
        return Markup("--")
    return Markup(f"${x:+.{digits}f}$" if signed else f"${x:.{digits}f}$")


def ci(lo: float | None, hi: float | None) -> Markup:
    if lo is None or hi is None:
        return Markup("--")
    return Markup(f"[{num(lo, signed=True)}, {num(hi, signed=True)}]")


def pct(x: float | None) -> Markup:
    return Markup("--") if x is None or math.isnan(x) else Markup(f"{100 * x:.0f}\\%")


def count(x: int | None) -> Markup:
    return Markup("n/a") if x is None else Markup(str(int(x)))


def _table(env: jinja2.Environment, *, caption: str, label: str, colspec: str, header: list, rows: list[list],
           note: str = "") -> str:
    return env.get_template("table.tex.j2").render(
        caption=caption, label=Markup(label), colspec=Markup(colspec), header=header, rows=rows, note=note)


def _pooled(summary: ReportSummary) -> dict[str, LiftRow]:
    return {r.outcome: r for r in summary.pooled}


def headline_rows(summary: ReportSummary) -> list[list]:
    boot = {(r["clustering"], r["outcome"]): r for r in summary.stats.bootstrap.rows}
    rows = []
    for o in (OUTCOME, OUTCOME_PER_PROTOCOL, REWARD, OUTCOME_ONLY, COMPOSITE):
        r = _pooled(summary).get(o)
        if r is None:
            continue
        bc, bs = boot.get(("case", o), {}), boot.get(("skill", o), {})
        rows.append([o, num(r.mean_with), num(r.mean_base), num(r.lift, signed=True), ci(r.ci_lo, r.ci_hi),
                     ci(bc.get("ci_lo"), bc.get("ci_hi")), ci(bs.get("ci_lo"), bs.get("ci_hi")), count(r.n),
                     count(r.n_cases), pct(r.share_pos)])
    return rows


def _headline_method(summary: ReportSummary) -> str:
    head = _pooled(summary).get(summary.headline_outcome)
    return (head.ci_method or head.ci_note or "none") if head is not None else "none"


def verdict_tex_rows(summary: ReportSummary) -> list[list]:
    from aces_bench.reports.verdict import verdict_rows

    rows = []
    for v in verdict_rows(summary):
        r = v.row
        arms = []
        for c in (v.arms[a] for a in summary.controls_run):
            arms.append(Markup(f"{num(c.lift if c else None, signed=True)} {ci(c.ci_lo, c.ci_hi)}")
                        if c is not None and c.ci_lo is not None else
                        Markup(f"{num(c.lift if c else None, signed=True)}{' (no var.)' if c and c.no_variation else ''}"))
        rows.append([v.skill, num(r.lift if r else None, signed=True),
                     ci(r.ci_lo, r.ci_hi) if r and r.ci_lo is not None else (r.ci_note if r and r.ci_note else "--"),
                     ci(r.adj_ci_lo if r else None, r.adj_ci_hi if r else None), *arms,
                     count(r.n_cases if r else 0), count(r.n if r else 0), v.status])
    return rows


ARM_HEADERS = {"null": "Null lift", "placebo": "Over placebo", "forced": "Discovery gap"}


def _arms_note(summary: ReportSummary) -> str:
    if not summary.controls_run:
        return " Calibration arms: not run (study.controls)."
    return (" Calibration arms: null lift = null minus baseline (the baseline run twice; expected 0), over placebo ="
            " with skill minus a sham skill of the same name and description, discovery gap = SKILL.md in the"
            " instruction minus the skill available; same pairing and CI as the lift.")


def metric_rows(summary: ReportSummary) -> list[list]:
    pooled = _pooled(summary)
    rows = []
    for m in metric_names():
        r = pooled.get(m)
        if r is None:
            continue
        rows.append([m, dimensions_of(m), "; ".join(r.produced_by.graders), num(r.mean_with), num(r.mean_base),
                     num(r.lift, signed=True), ci(r.ci_lo, r.ci_hi), count(r.n), pct(r.share_pos)])
    return rows


def rate(k: int, n: int, x: float | None) -> Markup:
    """A rate with its counts, e.g. ``75\\% (3/4)``; an en dash when nothing is known."""
    return Markup("--") if x is None else Markup(f"{100 * x:.0f}\\% ({k}/{n})")


def pass_rate_rows(summary: ReportSummary) -> list[list]:
    rows = []
    for r in [*summary.pass_rates, *summary.pass_rates_by_skill]:
        unknown = r.n_trials - r.n_skipped - r.n_final_known
        rows.append([r.group.get("skill", "all skills"), r.condition.replace("_", " "), count(r.n_trials),
                     rate(r.n_final_pass, r.n_final_known, r.final_rate),
                     rate(r.n_first_pass, r.n_first_known, r.first_rate), count(r.n_passed_after_patch), count(unknown)])
    return rows


def render_tables(summary: ReportSummary, items: list[InventoryItem], cover: list[CoverageRow]) -> dict[str, str]:
    """Every table's LaTeX source by file stem, plus the ``tables`` document that inputs them."""
    env = environment()
    level = int(summary.stats.settings.level * 100)
    who = f"Agents: {', '.join(summary.labels.agents)}. Backends: {', '.join(summary.labels.backends)}."
    out = {
        "headline": _table(
            env, caption=f"Skill Lift, headline ({summary.source})", label="tab:aces-headline", colspec="lrrrcccrrr",
            header=["Outcome", "With skill", "Baseline", "Lift", f"{level}% CI", "Case bootstrap",
                    "Skill bootstrap", "Pairs", "Cases", "Positive"],
            rows=headline_rows(summary),
            note=(f"Positive cases, pairs scored on both sides. CI: {_headline_method(summary)}. Bootstraps resample "
                  f"whole cases or whole skills (percentile). {who}")),
        "verdict": _table(
            env, caption="Verdict per skill", label="tab:aces-verdict",
            colspec="lrcc" + "l" * len(summary.controls_run) + "rrl",
            header=["Skill", "Lift", f"{level}% CI", "Adjusted CI", *(ARM_HEADERS[a] for a in summary.controls_run),
                    "Cases", "Pairs", "Verdict"],
            rows=verdict_tex_rows(summary),
            note=(f"Outcome: {summary.headline_outcome}. CI clustered by case (t, cases - 1 df). Adjusted: "
                  + (next((r.adjustment for r in summary.by_skill if r.adjustment), None) or "none") + "."
                  + _arms_note(summary))),
        "metrics": _table(
            env, caption="Skill Lift per metric", label="tab:aces-metrics", colspec="lllrrrcrr",
            header=["Metric", "Dimension", "Grader", "With skill", "Baseline", "Lift", f"{level}% CI", "n", "Positive"],
            rows=metric_rows(summary), note="Unscored trials are left out of a metric, never scored 0."),
        "pass_rates": _table(
            env, caption="Final vs first-attempt pass rate", label="tab:aces-pass-rates", colspec="llrrrrr",
            header=["Skill", "Condition", "Trials", "Final pass", "First-attempt pass", "Self-corrected", "Unknown"],
            rows=pass_rate_rows(summary),
            note=("First-attempt pass grades the first answer the agent produced (AEVAL); self-corrected: passed "
                  "only after changing its answer, an output or the skill. "
                  + (f"Final pass: {summary.pass_rates[0].final_source}. " if summary.pass_rates else "")
                  + "Unknown: final pass not recorded (failed or unscored trials), never counted as a failure.")),
        "inventory": _table(
            env, caption="Evidence inventory", label="tab:aces-inventory", colspec="lrl",
            header=["Item", "Count", "Note"], rows=[[i.item, count(i.count), i.note] for i in items]),
        "coverage": _table(
            env, caption="Per-harness coverage", label="tab:aces-coverage", colspec="llrrrrrrr",
            header=["Harness", "Models", "Skills", "Cells", "Trials", "OK", "Failed", "Scored pairs", "Lift"],
            rows=[[c.harness, ", ".join(c.models), count(c.n_skills), count(c.n_cells), count(c.n_trials), count(c.n_ok),
                   count(c.n_failed), count(c.n_scored_pairs), num(c.lift, signed=True)] for c in cover],
            note=f"Lift is the {summary.headline_outcome} lift over the harness's scored pairs."),
        "dimensions": _table(
            env, caption="Dimension mapping", label="tab:aces-dimensions", colspec="llrcr",
            header=["Dimension", "Source", "Lift", f"{level}% CI", "n"],
            rows=[[row.dimension, row.source, num(r.lift, signed=True), ci(r.ci_lo, r.ci_hi), count(r.n)]
                  for row in mapping() if (r := _pooled(summary).get(row.metric))],
            note="A dimension is the mean of its sources; for a sub-score source the lift shown is its whole metric's."),
    }
    out["tables"] = env.get_template("tables_document.tex.j2").render(
        title=f"aces-bench tables: {summary.source}", tables=[Markup(n) for n in TABLE_FILES])
    return out


def write_tables(out_dir: Path, summary: ReportSummary, items: list[InventoryItem], cover: list[CoverageRow]) -> list[Path]:
    """Write ``<stem>.tex`` for each table and ``tables.tex`` (a document inputting them)."""
    return [write_text(out_dir / f"{stem}.tex", text) for stem, text in render_tables(summary, items, cover).items()]
