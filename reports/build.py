"""Build ``<results>/report/`` from stored results: summary.json, figures, LaTeX, HTML.

Reads only what the study stored (trials table, grades, provenance, task dirs,
trajectories); never reruns a trial. Statistics come from ``aces_bench.stats``.
"""

from __future__ import annotations

import gc
import shutil
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pandas as pd

from aces_bench.core.gate import GateSettings
from aces_bench.core.io import staging_dir, swap_in, write_json, write_text
from aces_bench.core.outcomes import COMPOSITE
from aces_bench.records.stats import StatsSettings
from aces_bench.records.study_data import DESIGN_FILE, design_paper_page
from aces_bench.records.summary import SCHEMA_FILE, DesignMember, ReportSummary, summary_schema
from aces_bench.records.trials import PAIR_KEY, is_negative_control
from aces_bench.reports.analysis import analysis_sets, arm_rows, arm_views
from aces_bench.reports.appendix import write_appendix
from aces_bench.reports.confusion import visible_skills
from aces_bench.reports.dimensions import mapping
from aces_bench.reports.figure_data import FigureInputs
from aces_bench.reports.figure_set import draw_figures
from aces_bench.reports.html import (
    environment,
    pretty_json,
    render,
    skill_href,
    svg_data_uri,
)
from aces_bench.reports.inventory import coverage, inventory
from aces_bench.reports.judge_agreement import judge_agreement
from aces_bench.reports.latex import write_tables
from aces_bench.reports.limits import limits_in_force, local_backends
from aces_bench.reports.memo import preload, remember
from aces_bench.reports.no_verdict import no_verdict_rows
from aces_bench.reports.pages import StudyPages, relative
from aces_bench.reports.records import StudyData, load_study
from aces_bench.reports.sequential import reuse_rows, sequential_rows, sequential_verdicts, study_paths
from aces_bench.reports.standin import offline_model_runs, stand_in_text, stand_ins
from aces_bench.reports.static_live import scan_targets, section, structural_frame
from aces_bench.reports.summary import build_summary, graders_by_outcome
from aces_bench.reports.triage import activation
from aces_bench.reports.verdict import (
    control_views,
    correlation_sentence,
    first_screen_summary,
    headline_sentence,
    unreviewed_notes,
    verdict_rows,
)
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.missingness import one_sided_keys

REPORT_DIR = "report"
SUMMARY_FILE = "summary.json"
PAPER_PAGE = "paper.html"


def _grader_labels(study: StudyData) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = defaultdict(set)
    for m in study.members:
        for g in m.grades.values():
            for name, r in g.metrics.items():
                if r.score is not None:
                    labels[name].add(r.grader)
    return labels


def _provenance_views(study: StudyData) -> list[dict]:
    out = []
    for m in study.members:
        name = m.path.name if m.path != study.results_dir else m.path.name or str(m.path)
        config = pretty_json(m.provenance.spec.model_dump(mode="json")) if m.provenance else ""
        out.append({"name": name, "prov": m.provenance, "missing": m.provenance_note, "config": config,
                    "grades_note": m.grades_note})
    return out


def study_gate_settings(study: StudyData) -> GateSettings:
    """The gate's settings the study ran with (``study.gate``); the defaults when no provenance says."""
    for m in study.members:
        if m.provenance is not None:
            return GateSettings(**m.provenance.spec.study.gate.model_dump())
    return GateSettings()


def design_members(trials: pd.DataFrame) -> list[DesignMember]:
    """Each member of the study-level table with its arms and trial count, in table order."""
    if "member" not in trials.columns:
        return []
    out = []
    for member, part in trials.groupby("member", sort=False):
        first = part.iloc[0]
        out.append(DesignMember(member=str(member), arm=str(first["arm"]), arms=str(first["arms"]).split(";"),
                                n_trials=len(part)))
    return out


def _wants_paper_page(study: StudyData) -> bool:
    """The study asked for the paper page (``study.paper_page``, which study=aces_paper
    sets): its design.json says so, or a member's provenance does."""
    return design_paper_page(study.results_dir / DESIGN_FILE) or any(
        m.provenance and m.provenance.spec.study.paper_page for m in study.members)


def _negative_activation(pages: StudyPages, rec: dict) -> bool | None:
    """Did a with-skill trial on a negative control trigger the target skill? (``triage.activation``)"""
    traj, _ = pages.trajectory(rec)
    return activation(pages.grade(rec), traj, str(rec["skill"]))


def negative_control_activations(trials: pd.DataFrame, pages: StudyPages) -> pd.DataFrame:
    """One row per with-skill trial on a negative control (its pair key): did it trigger the target skill?"""
    sel = trials.loc[(trials["condition"] == "with_skill") & is_negative_control(trials)]
    rows = [{**{k: rec.get(k) for k in PAIR_KEY}, "activated": _negative_activation(pages, rec)}
            for rec in (pages.row({k: r[k] for k in PAIR_KEY}, "with_skill") or {} for r in sel.to_dict("records"))
            if rec]
    return pd.DataFrame(rows, columns=[*PAIR_KEY, "activated"])


def sub_checks(study: StudyData, run_ids: set[str] | None = None) -> pd.DataFrame:
    """Every graded sub-check of every trial (of the members holding ``run_ids``, when
    given): decided (a score) or not (the grader or judge abstained)."""
    members = [m for m in study.members if run_ids is None or set(m.run_ids) & run_ids]
    rows = [{"metric": name, "condition": g.condition, "check": check, "decided": score is not None}
            for m in members for g in m.grades.values() for name, r in g.metrics.items()
            for check, score in r.sub_scores.items()]
    return pd.DataFrame(rows, columns=["metric", "condition", "check", "decided"])


@contextmanager
def _long_lived_frozen() -> Iterator[None]:
    """Leave out of the cyclic garbage collector's scans every object alive on entry
    (imported modules, the caller's data) until exit.

    A build allocates millions of short-lived objects (pandas frames, matplotlib artists,
    font tables); each full collection would walk the hundreds of thousands of module
    objects too, about a second of CPU per report. Objects still alive are handed back to
    the collector on exit; nothing on the output changes.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def build_report(results_dir: Path, *, out_dir: Path | None = None, settings: StatsSettings | None = None,
                 static: bool = True, paper: bool | None = None) -> Path:
    """Write the report for a study (or multirun) results dir; returns ``report/index.html``.

    Promises: reads stored results only (trials are never rerun); scans the study's
    target skill folders still on disk for the static-vs-live section unless
    ``static=False``; writes summary.json, figures/ (SVG, PDF, PNG), tables/ (LaTeX),
    index.html, triage.html and skills/<skill>.html atomically.
    """
    results_dir = Path(results_dir)
    study = load_study(results_dir)
    final = Path(out_dir) if out_dir is not None else results_dir / REPORT_DIR
    # A rebuild keeps every page the previous report had unless told otherwise: the
    # paper page is rebuilt when it was there (``paper=False`` drops it on purpose).
    with_paper = paper if paper is not None else (_wants_paper_page(study) or (final / PAPER_PAGE).is_file())
    # Every artifact is written into a staging dir swapped in as a whole at the end: a
    # killed or failed build leaves the previous report untouched.
    out = staging_dir(final)
    try:
        with _long_lived_frozen():
            _build_into(out, study, results_dir, settings=settings, static=static, with_paper=with_paper, final=final)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    swap_in(out, final)
    return final / "index.html"


def study_summary(study: StudyData, *, source: str, settings: StatsSettings | None, scores, static: bool,
                  activations: pd.DataFrame, limits: list) -> ReportSummary:
    """The summary's statistics part: every number computed from the study's stored values
    (trials, grades, provenance), the static scan's scores and what ``_build_into`` read
    from files (negative-control activations, the limits in force). Reads nothing else, so
    a rebuild of an unchanged study takes it from the cache (``memo.remember``)."""
    preload("scipy.stats", "statsmodels.stats.contingency_tables", "statsmodels.stats.multitest")
    static_scores = structural_frame(scores) if scores is not None and scores.structural else None
    sets = analysis_sets(study.trials)
    primary = sets.headline.trials
    offline = frozenset(offline_model_runs(study.members))
    stats = study_stats(primary, settings=settings, static_scores=static_scores, activations=activations,
                        checks=sub_checks(study, set(primary["run_id"].astype(str))), routing_trials=sets.routing)
    pairs = build_pairs(primary)
    outcome = stats.settings.headline_outcome
    headline_study = replace(study, trials=primary)
    static_section = section(scores, stats.static_correlation, headline_study, outcome, stats.settings.level,
                             skip_reason=None if static else "static scan turned off for this report")
    graders = _grader_labels(study)
    summary = build_summary(primary, pairs, stats, source=source, grader_labels=graders,
                            static_vs_live=static_section, gate_settings=study_gate_settings(study),
                            limits_in_force=limits, visible=visible_skills(study.members),
                            # Group-mode trials of every arm (the primary arm is isolation): one
                            # table per skill, harness, model, decoy set and condition.
                            confusion_trials=study.trials, activations=activations,
                            judge_agreement=judge_agreement((g for m in study.members for g in m.grades.values()),
                                                            stats.settings.level))
    outcomes = tuple(dict.fromkeys((outcome, COMPOSITE)))
    return summary.model_copy(update={
        "analysis_set": sets.headline.description,
        "arms": arm_rows(sets, outcomes, stats.settings.level, graders_by_outcome(primary, graders), offline),
        "stand_in": stand_ins(primary, offline, outcome), "design": design_members(study.trials)})


def recorded_beside(study: StudyData, results_dir: Path, gate: list, primary: pd.DataFrame) -> dict:
    """What the summary says from the records a study keeps beside its trials: the cost and
    disk stops, the sequential ledger and the baseline-reuse plans, each skill's verdict as
    a sequential study stopped with it (not the gate re-read on fewer trials), and why a
    skill got none. Read from the folder on every build, never from the statistics cache."""
    from aces_bench.run.cost import read_stop
    from aces_bench.run.disk import read_stop as read_disk_stop

    members = study_paths(study)
    decided = sequential_verdicts(members)
    gate = [decided.get(v.skill, v) for v in gate] if decided else gate
    facts = {"sequential": sequential_rows(members, results_dir), "baseline_reuse": reuse_rows(members, results_dir),
             "gate": gate, "no_verdict": no_verdict_rows(gate, primary)}
    if (stop := read_stop(results_dir)) is not None:
        facts["stopped_by_cost_cap"] = stop.line()
    if (full := read_disk_stop(results_dir)) is not None:
        facts["stopped_by_disk_cap"] = full.line()
    return facts


def _build_into(out: Path, study, results_dir: Path, *, settings: StatsSettings | None, static: bool,
                with_paper: bool, final: Path | None = None) -> None:
    scores = scan_targets(study) if static else None
    if settings is None and any(m.provenance and m.provenance.spec.study.stop_on_pass for m in study.members):
        settings = StatsSettings(stop_on_pass=True)  # sequential pass@k even where no attempt was skipped
    pages = StudyPages(study, page_dir=(final or out) / "skills")
    # One named set per number (reports/analysis.py): the headline is the primary arm;
    # every other arm is reported apart, computed the same way.
    sets = analysis_sets(study.trials)
    primary = sets.headline.trials
    offline = frozenset(offline_model_runs(study.members))
    # What the summary reads from files (trajectories, the sandbox's records) is read here;
    # the rest is a function of the study's stored values, kept between builds (memo.py).
    activations = negative_control_activations(primary, pages)
    limits = limits_in_force(study.trials, results_dir, local_backends(study.members))
    source = f"aces-bench study {results_dir.resolve().name}"
    # study_summary never reads the study's folder names; keyed by them resolved, the study's
    # own build (an absolute path) and `aces-bench report outputs/x` share one entry.
    keyed = replace(study, results_dir=study.results_dir.resolve(),
                    members=[replace(m, path=m.path.resolve()) for m in study.members])
    summary = remember("report summary", ReportSummary,
                       lambda: study_summary(study, source=source, settings=settings, scores=scores, static=static,
                                             activations=activations, limits=limits),
                       keyed, source, settings, scores, static, activations, limits)
    stats = summary.stats
    pairs = build_pairs(primary)
    outcome = stats.settings.headline_outcome
    static_section = summary.static_vs_live
    summary = summary.model_copy(update=recorded_beside(study, results_dir, summary.gate, primary))
    write_json(out / SCHEMA_FILE, summary_schema())

    inputs = FigureInputs(stats, pairs, primary, static_section, sets=sets, offline_runs=offline)
    figures = draw_figures(inputs, out / "figures")
    grades = [g for m in study.members for g in m.grades.values()] if any(m.grades for m in study.members) else None
    items, cover = inventory(study.trials, summary, grades), coverage(primary, summary)
    tex = write_tables(out / "tables", summary, items, cover)

    write_appendix(out, summary)
    env = environment()
    skills = sorted(study.trials["skill"].astype(str).unique())
    nav = [{"name": s, "href": skill_href(s)} for s in skills]
    _write_index(env, out, summary, figures, items, cover, pairs, outcome, study, nav, tex,
                 paper_href=PAPER_PAGE if with_paper else None)
    for skill in skills:
        rows = [r for r in summary.by_skill if r.group.get("skill") == skill]
        html = render(env, "skill.html.j2", title=f"{skill}: paired cases", root="../", nav_skills=nav, skill=skill,
                      rows=rows, pairs=pages.skill_pairs(pairs, skill, outcome), outcome=outcome,
                      paper_href=PAPER_PAGE if with_paper else None, analysis_set=summary.analysis_set)
        write_text(out / skill_href(skill), html)
    groups = pages.triage(pairs, outcome)
    html = render(env, "triage.html.j2", title="Negative-lift triage", root="", nav_skills=nav, groups=groups,
                  outcome=outcome, n_negative=sum(len(g.cases) for g in groups),
                  paper_href=PAPER_PAGE if with_paper else None, analysis_set=summary.analysis_set)
    write_text(out / "triage.html", html)
    if with_paper:
        # The ACES paper's figures with its reported values beside the study's (paper.html).
        from aces_bench.reports.paper import write_paper_page

        _, rows = write_paper_page(out, inputs, items, nav=nav)
        summary = summary.model_copy(update={"side_by_side": rows})
    write_json(out / SUMMARY_FILE, summary)  # last: it carries the paper page's side-by-side rows


def _write_index(env, out: Path, summary: ReportSummary, figures, items, cover, pairs, outcome: str,
                 study: StudyData, nav: list[dict], tex: list[Path], paper_href: str | None = None) -> Path:
    stats = summary.stats
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
    keys = one_sided_keys(pairs, outcome)
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
        inference=inference_rows, headline_sentence=headline_sentence(summary), controls=control_views(summary),
        first_summary=first_screen_summary(summary), unreviewed=unreviewed_notes(summary),
        static_sentence=correlation_sentence(sl.tier1 if sl is not None else None, "Tier 1 structural"),
        paper_href=paper_href, arms=arm_views(summary), stand_in=stand_in_text(summary.stand_in),
    )
    return write_text(out / "index.html", html)
