"""Build ``<results>/report/`` from stored results: compute, then render.

Reads only what the study stored (trials table, grades, provenance, task dirs,
trajectories); never reruns a trial. This stage computes everything the report states:
the statistics (``aces_bench.stats``), the gate's verdicts, the static scan of the target
skills, what the trajectories show, and writes summary.json; ``aces_bench.reports.build``
then renders the figures, tables and pages from it.
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

from aces_bench.analysis.confusion import visible_skills
from aces_bench.analysis.figure_data import FigureInputs, figure_data, paper_tables
from aces_bench.analysis.inventory import coverage, inventory
from aces_bench.analysis.judge_agreement import judge_agreement
from aces_bench.analysis.no_verdict import no_verdict_rows
from aces_bench.analysis.pages import StudyPages
from aces_bench.analysis.paper import scan_for_paper
from aces_bench.analysis.sequential import reuse_rows, sequential_rows, sequential_verdicts, study_paths
from aces_bench.analysis.sets import analysis_sets
from aces_bench.analysis.side_by_side import side_by_side
from aces_bench.analysis.standin import offline_model_runs, stand_ins
from aces_bench.analysis.static_live import scan_targets, section, structural_frame
from aces_bench.analysis.summary import arm_rows, build_summary, graders_by_outcome
from aces_bench.analysis.verdict import control_views, headline_sentence
from aces_bench.core.gate import GateSettings
from aces_bench.core.io import staging_dir, swap_in, write_json
from aces_bench.core.outcomes import COMPOSITE
from aces_bench.records.stats import StatsSettings
from aces_bench.records.study import STUDY_FILE, record_part
from aces_bench.records.study_data import DESIGN_FILE, design_paper_page
from aces_bench.records.summary import SCHEMA_FILE, DesignMember, ReportSummary, summary_schema
from aces_bench.records.trials import PAIR_KEY, is_negative_control
from aces_bench.reports.build import PAPER_PAGE, REPORT_DIR, SUMMARY_FILE, ReportView, render_report
from aces_bench.reports.limits import limits_in_force, local_backends
from aces_bench.reports.memo import preload, remember
from aces_bench.reports.records import StudyData, load_study
from aces_bench.reports.reported import load_reported
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.missingness import one_sided_keys


def _grader_labels(study: StudyData) -> dict[str, set[str]]:
    labels: dict[str, set[str]] = defaultdict(set)
    for m in study.members:
        for g in m.grades.values():
            for name, r in g.metrics.items():
                if r.score is not None:
                    labels[name].add(r.grader)
    return labels


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


def negative_control_activations(trials: pd.DataFrame, pages: StudyPages) -> pd.DataFrame:
    """One row per with-skill trial on a negative control (its pair key): did it trigger the target skill?"""
    sel = trials.loc[(trials["condition"] == "with_skill") & is_negative_control(trials)]
    rows = [{**{k: rec.get(k) for k in PAIR_KEY}, "activated": pages.activation(rec)}
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
    index.html, triage.html and skills/<skill>.html atomically; records summary.json as
    the study's ``statistics`` part in its study.json when the report is the study's own.
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
    if final == results_dir / REPORT_DIR and (results_dir / STUDY_FILE).is_file():
        # The statistics are the study's part: a rebuild re-records them (a report written
        # elsewhere, --out, or over a sweep's members is not the study's own).
        record_part(results_dir, "statistics", ReportSummary, stage="report")
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
    grades = [g for m in study.members for g in m.grades.values()] if any(m.grades for m in study.members) else None
    items = inventory(study.trials, summary, grades)
    paper = None
    if with_paper:  # the paper page's one static scan, its tables and side-by-side rows, before anything is drawn
        reported = load_reported()
        scan = scan_for_paper(static_section, reported)
        paper = paper_tables(inputs, scan, reported)
        summary = summary.model_copy(update={"side_by_side": side_by_side(inputs, reported, items, scan)})
    skills = sorted(study.trials["skill"].astype(str).unique())
    view = ReportView(summary=summary, study=study, figures=figure_data(inputs), inventory=items,
                      coverage=coverage(primary, summary), one_sided_keys=one_sided_keys(pairs, outcome),
                      skill_pairs={s: pages.skill_pairs(pairs, s, outcome) for s in skills},
                      triage=pages.triage(pairs, outcome), controls=control_views(summary),
                      headline_sentence=headline_sentence(summary), paper=paper)
    render_report(out, view)
    write_json(out / SUMMARY_FILE, summary)
