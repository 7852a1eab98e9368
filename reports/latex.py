"""LaTeX tables for a paper (booktabs, siunitx, tabularx): headline, verdict, arms,
calibration, per metric, pass rates, evidence, coverage, dimensions, and on the paper
page the side-by-side table and the corpus by category.

Every table fits the line width of a standard one-column ``article`` (tables with a text
column are ``tabularx`` to ``\\linewidth``, so they also narrow to ``\\columnwidth`` in a
two-column paper): the test suite compiles each one, ``\\input`` into an ``article`` and
standalone, and fails on any overfull box over 1 pt. Numbers are decimal-aligned
(siunitx ``S`` columns; an interval is two numeric columns, low and high, never prose);
row and column labels are words, not keys; captions state the analysis set, n, the
interval method, the agent, the judge and, where a stand-in produced the numbers, that
they are not comparable with the paper. A document that ``\\input``-s a table loads
``booktabs``, ``siunitx`` and ``tabularx`` (``PREAMBLE``).

Rendered through jinja2 with LaTeX-safe delimiters (``\\BLOCK{...}``, ``\\VAR{...}``) so
the template's own braces are plain LaTeX. Every value is escaped on output
(``& % $ # _ { } ~ ^ \\`` and ``< > |``, straight quotes made typographic) unless it is
``Markup`` built here from numbers, so a skill or model name can never break (or inject
into) the document.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from aces_bench.core.io import write_text
from aces_bench.core.metrics import metric_names
from aces_bench.core.outcomes import COMPOSITE, OUTCOME, OUTCOME_ONLY, OUTCOME_PER_PROTOCOL, REWARD
from aces_bench.records.summary import LiftRow, ReportSummary
from aces_bench.reports.dimensions import dimensions_of, mapping
from aces_bench.reports.inventory import WHOLE_STUDY, CoverageRow, InventoryItem
from aces_bench.reports.labels import outcome_label, source_label
from aces_bench.reports.standin import HEURISTIC_JUDGE, stand_in_text
from aces_bench.reports.templating import cache_compiled

TEMPLATES = Path(__file__).parent / "templates"
_TEX_SPECIAL = {
    # Math-mode and accent forms need only the base CM fonts (no TS1/textcomp bitmaps).
    "\\": r"$\backslash$", "&": r"\&", "%": r"\%", "$": r"$\$$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\~{}", "^": r"\^{}",
    "<": r"$<$", ">": r"$>$", "|": r"$|$",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in _TEX_SPECIAL))
_NON_ASCII = re.compile(r"[^\x20-\x7e]")
_DOUBLE_QUOTED = re.compile(r'"([^"]*)"')
_OPENING_SINGLE = re.compile(r"(^|[\s(\[])'")
TABLE_FILES = ("headline", "verdict", "arms", "calibration", "metrics", "pass_rates", "inventory", "coverage",
               "dimensions")
PAPER_TABLE_FILES = ("side_by_side", "corpus_by_category")
DOCUMENT = "tables.tex"
PREAMBLE = ("booktabs", "siunitx", "tabularx")


def tex_escape(value: object) -> str:
    """Plain text made safe to typeset in LaTeX (every special character escaped).

    Characters outside printable ASCII become ``?``: pdflatex stops on a Unicode
    character it has no definition for, and names are identifiers, not prose. Straight
    quotes become typographic ones (``"a"`` -> ````a''``), which LaTeX would otherwise
    set as two closing quotes. A slash may end a line (``\\slash``), so a long model id fits
    a narrow column.
    """
    text = "" if value is None else str(value)
    text = _NON_ASCII.sub("?", text)
    text = _TEX_RE.sub(lambda m: _TEX_SPECIAL[m.group(0)], text)
    text = text.replace("/", r"\slash{}")  # a model id (anthropic/claude-...) may break after a slash
    text = _DOUBLE_QUOTED.sub(lambda m: f"``{m.group(1)}''", text)
    text = text.replace('"', "''")
    return _OPENING_SINGLE.sub(lambda m: f"{m.group(1)}`", text)


def _finalize(value: object) -> object:
    return value if isinstance(value, Markup) else tex_escape(value)


def environment() -> jinja2.Environment:
    return cache_compiled(jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, autoescape=False, keep_trailing_newline=True,
        finalize=_finalize, undefined=jinja2.StrictUndefined,
    ))


# --- columns and cells -----------------------------------------------------------------


@dataclass(frozen=True)
class Col:
    """One column: its header (words) and what its cells hold.

    ``kind``: ``text`` (left), ``wide`` (left, wraps: the tabularx X column), ``narrow``
    (left, wraps at a fixed 5.5em: a few words beside a wide column), ``signed``
    (a lift, +0.123), ``num`` (0.123), ``count`` (integer), ``pct`` (0-100), ``p`` (a
    p-value, <0.001 below a thousandth), ``value`` (an integer as one, else ``digits``
    decimals: a table mixing counts and shares), ``frac`` (k/n, right-aligned text).
    """

    header: str
    kind: str = "text"
    digits: int = 3
    group: str = ""  # a header spanning this and the next columns of the same group (e.g. "95% CI")


NUMERIC = ("signed", "num", "value", "count", "pct", "p")


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def cell(col: Col, x: Any) -> Markup | str:
    """A value as its column typesets it; a missing number is an en dash."""
    if col.kind in NUMERIC:
        if _missing(x):
            return Markup("{--}")
        if isinstance(x, Markup):  # formatted by the table (``value_cells``): a number as text
            return x
        x = float(x)
        if col.kind == "signed":
            return Markup(f"{x:+.{col.digits}f}")
        if col.kind == "num":
            return Markup(f"{x:.{col.digits}f}")
        if col.kind == "value":  # a count stays a count, a share or score gets its decimals
            return Markup(f"{int(x)}" if x.is_integer() and abs(x) >= 1 else f"{x:.{col.digits}f}")
        if col.kind == "count":
            return Markup(f"{int(round(x))}")
        if col.kind == "pct":
            return Markup(f"{100 * x:.0f}")
        if col.kind == "p":
            return Markup("<0.001" if x < 0.001 else f"{x:.3f}")
    if _missing(x):
        return Markup("--")
    if col.kind == "frac":  # k/n: digits and one slash, nothing to escape
        return Markup(re.sub(r"[^0-9/]", "", str(x)))
    return str(x)


def _int_digits(values: list[Any], col: Col) -> int:
    vals = [abs(float(v)) for v in values if not _missing(v)]
    if col.kind == "pct":
        vals = [100 * v for v in vals]
    return max([len(str(int(round(v)))) for v in vals] or [1])


def colspec(cols: list[Col], rows: list[list[Any]]) -> str:
    specs = []
    for i, c in enumerate(cols):
        values = [r[i] for r in rows]
        if c.kind == "wide":
            specs.append(r">{\raggedright\arraybackslash}X")
        elif c.kind in ("text",):
            specs.append("l")
        elif c.kind == "narrow":
            specs.append(r">{\raggedright\arraybackslash}p{5.5em}")
        elif c.kind == "frac":
            specs.append("r")
        elif c.kind == "signed":
            specs.append(f"S[table-format=+{_int_digits(values, c)}.{c.digits},retain-explicit-plus]")
        elif c.kind in ("num", "value"):
            sign = "-" if any(not _missing(v) and float(v) < 0 for v in values) else ""
            specs.append(f"S[table-format={sign}{_int_digits(values, c)}.{c.digits}]")
        elif c.kind in ("count", "pct"):
            specs.append(f"S[table-format={_int_digits(values, c)}.0]")
        elif c.kind == "p":
            specs.append("S[table-format=<1.3]")
    return "".join(specs)


def header_cell(col: Col) -> Markup:
    text = tex_escape(col.header)
    return Markup(f"{{{text}}}" if col.kind in NUMERIC else text)


def group_header(cols: list[Col]) -> Markup | None:
    """The spanning first header row (and its rules) for grouped columns; None without groups."""
    if not any(c.group for c in cols):
        return None
    cells, rules, i = [], [], 0
    while i < len(cols):
        g = cols[i].group
        j = i
        while j + 1 < len(cols) and g and cols[j + 1].group == g:
            j += 1
        if g:
            cells.append(rf"\multicolumn{{{j - i + 1}}}{{c}}{{{tex_escape(g)}}}")
            rules.append(rf"\cmidrule(lr){{{i + 1}-{j + 1}}}")
        else:
            cells.append("")
        i = j + 1
    return Markup(" & ".join(cells) + r" \\ " + " ".join(rules))


def table(env: jinja2.Environment, *, caption: str, short: str, label: str, cols: list[Col], rows: list[list[Any]],
          note: str = "", sections: list[tuple[int, str]] | None = None) -> str:
    """One booktabs table; ``sections``: (row index, title) subheadings inside it."""
    starts = dict(sections or [])
    body = []
    for i, r in enumerate(rows):
        if i in starts:
            if i:
                body.append(Markup(r"\addlinespace"))
            body.append(Markup(rf"\multicolumn{{{len(cols)}}}{{@{{}}l}}{{\itshape {tex_escape(starts[i])}}} \\"))
        body.append(Markup(" & ".join(str(_finalize(cell(c, v))) for c, v in zip(cols, r, strict=True)) + r" \\"))
    wide = any(c.kind == "wide" for c in cols)
    return env.get_template("table.tex.j2").render(
        caption=caption, short=short, label=Markup(label), colspec=Markup(colspec(cols, rows)), wide=wide,
        groups=group_header(cols), header=[header_cell(c) for c in cols], body=body, note=note)


# --- captions --------------------------------------------------------------------------


def _pooled(summary: ReportSummary) -> dict[str, LiftRow]:
    return {r.outcome: r for r in summary.pooled}


def who(summary: ReportSummary, *, judged: bool = False, stand: list[str] | None = None) -> str:
    """Agent, model, judge and backend behind the numbers, and the stand-in mark.

    ``judged``: the table has rows resting on a judged metric (composite, outcome-only,
    a judged metric), so an offline heuristic judge is a stand-in for them even when the
    headline outcome (verifier-graded) does not name it. ``stand``: the table's own
    stand-ins, when they are not the headline's.
    """
    agents = ", ".join(summary.labels.agents) or "n/a"
    judges = ", ".join(summary.labels.judges) or "none recorded"
    text = (f"Agent: {agents}; model: {', '.join(summary.labels.models) or 'n/a'}; judge: {judges}; "
            f"backend: {', '.join(summary.labels.backends) or 'n/a'}.")
    names = list(summary.stand_in if stand is None else stand)
    if judged and any(j.startswith("heuristic") for j in summary.labels.judges) and HEURISTIC_JUDGE not in names:
        names.append(HEURISTIC_JUDGE)
    return with_mark(text, names)


def with_mark(text: str, stand: list[str]) -> str:
    """``text`` followed by the stand-in mark as a sentence (nothing without stand-ins)."""
    mark = stand_in_text(stand)
    return f"{text} {mark[:1].upper()}{mark[1:]}.".strip() if mark else text


def trials_who(trials) -> str:
    """Agent, model and judge named from a trials table (the paper page's tables)."""
    def names(col: str) -> str:
        if col not in trials.columns:
            return "n/a"
        return ", ".join(sorted(trials[col].dropna().astype(str).unique())) or "n/a"

    return f"Agent: {names('agent_label')}; model: {names('model')}; judge: {names('judge_label')}."


def _set(summary: ReportSummary) -> str:
    return summary.analysis_set or "every trial of the study, positive cases"


def _method(row: LiftRow | None) -> str:
    if row is None:
        return "no interval"
    return row.ci_method or row.ci_note or "no interval"


def _level(summary: ReportSummary) -> int:
    return int(round(summary.stats.settings.level * 100))


def _n_text(row: LiftRow | None) -> str:
    if row is None:
        return "n = 0 scored pairs"
    return f"n = {row.n} scored pairs in {row.n_cases or 0} cases"


# --- the tables --------------------------------------------------------------------------


def ci_cols(pct: int = 95, group: str | None = None, digits: int = 3) -> list[Col]:
    """An interval as two numeric columns under one spanning header."""
    name = group or f"{pct}% CI"
    return [Col("low", "signed", digits, group=name), Col("high", "signed", digits, group=name)]


ADJ = ci_cols(group="Adjusted")


def headline_table(env, summary: ReportSummary) -> str:
    pooled = _pooled(summary)
    cols = [Col("Outcome", "wide"), Col("With skill", "num"), Col("Baseline", "num"), Col("Lift", "signed"), *ci_cols(_level(summary)),
            Col("Pairs", "count"), Col("Cases", "count"), Col("Pos. %", "pct")]
    rows = []
    for o in (OUTCOME, OUTCOME_PER_PROTOCOL, REWARD, OUTCOME_ONLY, COMPOSITE):
        r = pooled.get(o)
        if r is not None:
            rows.append([outcome_label(o), r.mean_with, r.mean_base, r.lift, r.ci_lo, r.ci_hi, r.n, r.n_cases,
                         r.share_pos])
    head = pooled.get(summary.headline_outcome)
    caption = (f"Skill Lift, headline. Set: {_set(summary)}; {_n_text(head)} ({outcome_label(summary.headline_outcome)}"
               f"). {_level(summary)}% CI: {_method(head)}; a dash: no interval (no variation observed, or one "
               f"pair). Pos.: share of pairs with positive lift. {who(summary, judged=True)}")
    return table(env, caption=caption, short="Skill Lift, headline", label="tab:aces-headline", cols=cols, rows=rows,
                 note="Lift: score with the skill minus without it, per pair scored on both sides. The task outcome "
                      "is the verifier's reward where the case has checks, else the judged outcome; a trial that timed out or "
                      "failed through the agent or skill scores 0 (intention to treat).")


def verdict_table(env, summary: ReportSummary) -> str:
    from aces_bench.reports.verdict import verdict_rows

    # The verdict is the gate's words ("harms should-not-use cases"): a column that wraps, so the
    # skill names keep the width they need.
    cols = [Col("Skill", "wide"), Col("Lift", "signed"), *ci_cols(_level(summary)), Col("Cases", "count"),
            Col("Won", "count"), Col("Lost", "count"), Col("Gate p", "p"), Col("Verdict", "narrow")]
    rows = []
    for v in verdict_rows(summary):
        r, g = v.row, v.gate
        rows.append([v.skill, r.lift if r else None, r.ci_lo if r else None, r.ci_hi if r else None,
                     g.n_cases if g else 0, g.n_wins if g else 0, g.n_losses if g else 0, g.p_value if g else None,
                     v.status])
    caption = (f"Verdict per skill: the gate (docs/gate.md). Lift: {outcome_label(summary.headline_outcome).lower()}"
               f", set: {_set(summary)}; {_level(summary)}% CI clustered by case (t, cases - 1 df); a dash: no "
               f"interval. Cases, won, lost and the gate's one-sided p are per distinct case on the pass "
               f"difference. {who(summary)}")
    return table(env, caption=caption, short="Verdict per skill", label="tab:aces-verdict", cols=cols, rows=rows,
                 note=_gate_note(summary))


def _gate_note(summary: ReportSummary) -> str:
    """The verdict column's rule in words: the gate's (docs/gate.md), at the settings it ran with."""
    g = next(iter(summary.gate), None)
    if g is None:
        return "Verdict: no per-case gate data in this summary (rebuild the report)."
    st = g.settings
    return (f"Verdict: the gate (docs/gate.md; the same rule as the fail-under-lift gate and aces-bench ci): helps only when the pass-rate "
            f"lift per distinct case (failures counted as losses) is above {st.threshold:g} by a one-sided "
            f"betting test at level {st.alpha:g} ({g.family or '1 skill'}), with at least {st.min_cases} cases won, no credible harm on should-not-use "
            f"cases (no case the baseline always passes broken; one-sided, level {st.harm_alpha:g}) and a null arm consistent with 0 where it ran; else "
            "not enough cases, does not reach threshold, harms, harms should-not-use cases or null arm shows an "
            "effect. The intervals describe the lift; the gate decides.")


def arms_table(env, summary: ReportSummary) -> str | None:
    from aces_bench.reports.analysis import arm_views

    views = arm_views(summary)
    if len(views) < 2:
        return None
    o = summary.headline_outcome
    cols = [Col("Arm", "wide"), Col("Level", "wide"), Col("Pairs", "count"), Col("Cases", "count"),
            Col("Lift", "signed"), *ci_cols(_level(summary)), Col("Composite", "signed")]
    rows = []
    for a in views:
        m, c = a["main"], a["composite"]
        rows.append([a["label"] + (" (headline)" if a["headline"] else ""), a["level"], m.n if m else 0,
                     m.n_cases if m else None, m.lift if m else None, m.ci_lo if m else None,
                     m.ci_hi if m else None, c.lift if c else None])
    stand = sorted({s for a in views for s in a["stand_in"]})
    caption = (f"Every arm of the study, each computed as the headline is (same pairing, positive cases, same "
               f"interval method), reported apart from it; the first row is the headline set. Pairs: scored on both "
               f"sides; cases: their distinct cases. Lift: {outcome_label(o).lower()}; composite: the paper's "
               f"statistic. {_level(summary)}% CI per row, clustered by case (t, cases - 1 df); a dash: no interval. "
               f"{who(summary, stand=stand)}")
    return table(env, caption=caption.strip(), short="Arms of the study", label="tab:aces-arms", cols=cols, rows=rows)


def calibration_table(env, summary: ReportSummary) -> str | None:
    if not summary.controls_run:
        return None
    from aces_bench.reports.analysis import CALIBRATION_LABELS

    o = summary.headline_outcome
    short = {"null": "Null lift (A/A)", "placebo": "Over placebo", "forced": "Discovery gap"}
    cols = [Col("Skill", "wide"), Col("Arm", "text"), Col("Lift", "signed"), *ci_cols(_level(summary)),
            Col("Pairs", "count")]
    rows = []
    for arm in summary.controls_run:
        row = summary.control(arm, o)
        rows.append(["all skills", short.get(arm, arm), row.lift if row else None, row.ci_lo if row else None,
                     row.ci_hi if row else None, row.n if row else 0])
        for r in summary.controls_by_skill:
            if r.arm == arm and r.outcome == o:
                rows.append([r.group.get("skill", ""), short.get(arm, arm), r.lift, r.ci_lo, r.ci_hi, r.n])
    caption = (f"Calibration arms ({outcome_label(o).lower()}): " + "; ".join(CALIBRATION_LABELS.get(a, a)
               for a in summary.controls_run) + f". Set: {_set(summary)}. Same pairing and {_level(summary)}% CI as "
               f"the lift; a dash: no interval. {who(summary)}")
    return table(env, caption=caption, short="Calibration arms", label="tab:aces-calibration", cols=cols, rows=rows)


def metrics_table(env, summary: ReportSummary) -> str:
    pooled = _pooled(summary)
    cols = [Col("Metric", "wide"), Col("Dimension", "wide"), Col("With", "num"), Col("Base", "num"),
            Col("Lift", "signed"), *ci_cols(_level(summary)), Col("n", "count")]
    rows, graders = [], {}
    for m in metric_names():
        r = pooled.get(m)
        if r is None:
            continue
        rows.append([outcome_label(m), dimensions_of(m), r.mean_with, r.mean_base, r.lift, r.ci_lo, r.ci_hi, r.n])
        graders.setdefault("; ".join(r.produced_by.graders) or "n/a", []).append(outcome_label(m).lower())
    graded = "; ".join(f"{', '.join(ms)} by {g}" for g, ms in graders.items())
    caption = (f"Skill Lift per metric. Set: {_set(summary)}. n: pairs scored on both sides (unscored trials are "
               f"left out of a metric, never scored 0). {_level(summary)}% CI clustered by case. Graded: {graded}. "
               f"{who(summary, judged=True)}")
    return table(env, caption=caption, short="Skill Lift per metric", label="tab:aces-metrics", cols=cols, rows=rows)


def pass_rates_table(env, summary: ReportSummary) -> str:
    # One subheading per skill (all skills first): a skill name never wraps in a narrow column.
    cols = [Col("Condition", "wide"), Col("Trials", "count"),
            Col("k/n", "frac", group="Final pass"), Col("%", "pct", group="Final pass"),
            Col("k/n", "frac", group="First attempt"), Col("%", "pct", group="First attempt"),
            Col("Self-corrected", "count"), Col("Unknown", "count")]
    rows, heads = [], []
    for r in [*summary.pass_rates, *summary.pass_rates_by_skill]:
        skill = r.group.get("skill", "all skills")
        if not heads or heads[-1][1] != skill:
            heads.append((len(rows), skill))
        unknown = r.n_trials - r.n_skipped - r.n_final_known
        rows.append([r.condition.replace("_", " "), r.n_trials, f"{r.n_final_pass}/{r.n_final_known}", r.final_rate,
                     f"{r.n_first_pass}/{r.n_first_known}", r.first_rate, r.n_passed_after_patch, unknown])
    source = f" Final pass: {summary.pass_rates[0].final_source}." if summary.pass_rates else ""
    caption = (f"Final vs first-attempt pass rate, all skills and per skill. Set: {_set(summary)}.{source} First "
               f"attempt grades the first answer the agent produced (AEVAL); self-corrected: passed only after "
               f"changing its answer, an output or the skill. Unknown: final pass not recorded (failed or "
               f"unscored trials), never counted as a failure. {who(summary)}")
    return table(env, caption=caption, short="Final vs first-attempt pass rate", label="tab:aces-pass-rates",
                 cols=cols, rows=rows, sections=heads)


def inventory_table(env, summary: ReportSummary, items: list[InventoryItem]) -> str:
    cols = [Col("Item", "wide"), Col("Count", "count"), Col("Note", "wide")]
    rows = [[i.item, i.count, i.note] for i in items]
    sets = sorted({i.analysis_set for i in items}) or [WHOLE_STUDY]
    caption = f"Evidence inventory. Set: {'; '.join(sets)}. {who(summary)}"
    return table(env, caption=caption, short="Evidence inventory", label="tab:aces-inventory", cols=cols, rows=rows)


def coverage_table(env, summary: ReportSummary, cover: list[CoverageRow]) -> str:
    cols = [Col("Harness", "text"), Col("Models", "wide"), Col("Skills", "count"), Col("Cells", "count"),
            Col("Trials", "count"), Col("OK", "count"), Col("Failed", "count"), Col("Pairs", "count"),
            Col("Lift", "signed")]
    rows = [[c.harness, ", ".join(c.models), c.n_skills, c.n_cells, c.n_trials, c.n_ok, c.n_failed,
             c.n_scored_pairs, c.lift] for c in cover]
    caption = (f"Per-harness coverage. Set: {_set(summary)}. Pairs: scored pairs; lift: the "
               f"{outcome_label(summary.headline_outcome).lower()} lift over them. {who(summary)}")
    return table(env, caption=caption, short="Per-harness coverage", label="tab:aces-coverage", cols=cols, rows=rows)


def dimensions_table(env, summary: ReportSummary) -> str:
    pooled = _pooled(summary)
    cols = [Col("Dimension", "text"), Col("Source", "wide"), Col("Lift", "signed"), *ci_cols(_level(summary)), Col("n", "count")]
    rows = [[row.dimension, source_label(row.source), r.lift, r.ci_lo, r.ci_hi, r.n]
            for row in mapping() if (r := pooled.get(row.metric))]
    caption = (f"Dimension mapping. Set: {_set(summary)}. A dimension is the mean of its sources; for a sub-score "
               f"source the lift shown is its whole metric's. {_level(summary)}% CI clustered by case. "
               f"{who(summary, judged=True)}")
    return table(env, caption=caption, short="Dimension mapping", label="tab:aces-dimensions", cols=cols, rows=rows)


def render_tables(summary: ReportSummary, items: list[InventoryItem], cover: list[CoverageRow]) -> dict[str, str]:
    """Every table's LaTeX source by file stem, plus the ``tables`` document that inputs them."""
    env = environment()
    out = {
        "headline": headline_table(env, summary),
        "verdict": verdict_table(env, summary),
        "arms": arms_table(env, summary),
        "calibration": calibration_table(env, summary),
        "metrics": metrics_table(env, summary),
        "pass_rates": pass_rates_table(env, summary),
        "inventory": inventory_table(env, summary, items),
        "coverage": coverage_table(env, summary, cover),
        "dimensions": dimensions_table(env, summary),
    }
    out = {k: v for k, v in out.items() if v is not None}
    out["tables"] = document(f"aces-bench tables: {summary.source}", list(out))
    return out


def document(title: str, names: list[str]) -> str:
    """A one-column ``article`` that inputs the named tables (the compile check, and a preview)."""
    return environment().get_template("tables_document.tex.j2").render(
        title=title, tables=[Markup(n) for n in names], packages=[Markup(p) for p in PREAMBLE])


def write_tables(out_dir: Path, summary: ReportSummary, items: list[InventoryItem], cover: list[CoverageRow]) -> list[Path]:
    """Write ``<stem>.tex`` for each table and ``tables.tex`` (a document inputting them)."""
    return [write_text(out_dir / f"{stem}.tex", text) for stem, text in render_tables(summary, items, cover).items()]


# --- the paper page's tables ------------------------------------------------------------


SIDE_BY_SIDE_ROWS = 30  # rows per float: a page of a one-column article holds about 40 at \small


def _integral(x: float) -> bool:
    return float(x).is_integer()


def value_cells(quantity: str, section: str, values: list[Any]) -> list[Any]:
    """One row's numbers formatted alike: counts as integers, every other quantity with the
    same decimals in both columns (4 below 10, else 1: shares and lifts, then seconds and
    0-100 scores), so a score of 1 reads 1.0000 beside the paper's 0.7460, never 1."""
    known = [float(v) for v in values if not _missing(v)]
    count = section == "evidence inventory" or quantity.endswith(": skills") or bool(known) and all(
        _integral(v) for v in known) and max(abs(v) for v in known) >= 2
    digits = 4 if not known or max(abs(v) for v in known) < 10 else 1
    return [None if _missing(v) else Markup(f"{int(round(float(v)))}" if count else f"{float(v):.{digits}f}")
            for v in values]


def side_by_side_table(env, rows: list, stand: list[str], analysis_set: str, who_text: str = "") -> str:
    """The side-by-side rows as consecutive floats of whole sections, each fitting a page."""
    cols = [Col("Quantity", "wide"), Col("Paper", "value", 4), Col("This study", "value", 4), Col("n", "count")]
    sections: dict[str, list] = {}
    for r in rows:
        sections.setdefault(r.section, []).append(r)
    chunks: list[list[str]] = [[]]
    for name, part in sections.items():
        if chunks[-1] and sum(len(sections[n]) for n in chunks[-1]) + len(part) > SIDE_BY_SIDE_ROWS:
            chunks.append([])
        chunks[-1].append(name)
    out = []
    for i, names in enumerate(chunks, start=1):
        body, heads = [], []
        for name in names:
            heads.append((len(body), name[:1].upper() + name[1:]))
            body += [[r.quantity, *value_cells(r.quantity, r.section, [r.reported, r.study]), r.n]
                     for r in sections[name]]
        part = f" ({i} of {len(chunks)}: {', '.join(names)})" if len(chunks) > 1 else ""
        # The mark heads a float only when one of its rows was produced with a stand-in
        # (a static scan of the skills involves no agent or judge).
        marked = any(r.stand_in for name in names for r in sections[name])
        caption = (f"The ACES paper's reported values beside this study's{part}; a dash: not available; n: pairs "
                   f"(or trials, skills) behind this study's value. Set of the headline rows: {analysis_set}; "
                   f"intervals as in the headline table; every row's set and note are in side_by_side.csv. "
                   f"{with_mark(who_text, stand if marked else [])}")
        out.append(table(env, caption=caption.strip(), short=f"ACES paper vs this study{part}",
                         label=f"tab:aces-side-by-side-{i}", cols=cols, rows=body, sections=heads))
    return "\n".join(out)


def corpus_table(env, categories: list[dict], reported: list[dict], profile: str) -> str:
    cols = [Col("Category", "wide"), Col("Paper n", "count"), Col("Paper mean", "num", 1),
            Col("Study n", "count"), Col("Study mean", "num", 1), Col("Study median", "num", 1)]
    ours = {c["category"]: c for c in categories}
    paper = {c["category"]: c for c in reported}
    rows = []
    for cat in [*paper, *(c for c in ours if c not in paper)]:
        o, p = ours.get(cat), paper.get(cat)
        rows.append([cat, p["n"] if p else None, p["mean"] if p else None, o["n"] if o else None,
                     o["mean"] if o else None, o["median"] if o else None])
    caption = (f"Tier 1 structural score by skill category (the paper's Table 5) beside this study's target skills "
               f"(rule profile: {profile}; category from the SKILL.md frontmatter, category or metadata.category; "
               f"uncategorised without one).")
    return table(env, caption=caption, short="Corpus by category", label="tab:aces-corpus-by-category", cols=cols,
                 rows=rows)


def write_paper_tables(out_dir: Path, rows: list, stand: list[str], analysis_set: str, trials, scan,
                       reported: dict) -> list[Path]:
    """``side_by_side.tex`` and (with a scan) ``corpus_by_category.tex`` beside the other
    tables, and ``tables.tex`` again with them in it; ``reported``: the paper's figures."""
    env = environment()
    written = [write_text(out_dir / "side_by_side.tex", side_by_side_table(
        env, rows, stand, analysis_set, trials_who(trials)))]
    if scan is not None:
        by_category = reported.get("static_scan", {}).get("by_category", [])
        written.append(write_text(out_dir / "corpus_by_category.tex",
                                  corpus_table(env, scan.categories, by_category, scan.profile)))
    names = [n for n in (*TABLE_FILES, *PAPER_TABLE_FILES) if (out_dir / f"{n}.tex").is_file()]
    doc = out_dir / DOCUMENT
    title = "aces-bench tables"
    if doc.is_file():
        m = re.search(r"\\section\*\{(.*)\}", doc.read_text())
        title = m.group(1) if m else title
    write_text(doc, environment().get_template("tables_document.tex.j2").render(
        title=Markup(title), tables=[Markup(n) for n in names], packages=[Markup(p) for p in PREAMBLE]))
    return written
