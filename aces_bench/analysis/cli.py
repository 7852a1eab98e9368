"""``aces-bench report``: regenerate a report from stored results, or report SkillsBench's registry.

    aces-bench report <results-dir> [--out DIR] [--fail-under-lift X [--outcome O] [--per-skill]]
    aces-bench report --skillsbench <results-registry.json> [--out DIR]

With ``--fail-under-lift`` the command is a CI gate (``analysis/gate.py``, the rule in
``aces_bench/stats/gate.py`` and docs/gate.md): exit 1, one line per failing skill with
its verdict, unless every skill's pass-rate lift is credibly above X by the gate's
one-sided betting test (Holm across the study's skills unless ``--per-skill``) with enough
cases won, no harm on should-not-use cases and a null arm consistent with 0; exit 0 otherwise. A study without a null arm is said to have none
("null arm not run"), never passed on it.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from aces_bench.core.errors import ReportError
from aces_bench.core.outcomes import OUTCOME, OUTCOMES

DEFAULT_SKILLSBENCH_OUT = Path("outputs/skillsbench/report")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aces-bench report", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Regenerate the report from stored results (no trial is rerun).",
        epilog="CI gate for skill changes:\n"
               "  aces-bench report outputs/my-study --fail-under-lift 0.05\n"
               "  aces-bench report outputs/my-study --fail-under-lift 0 --per-skill\n"
               "exits 1 and prints 'FAIL <skill>: <verdict>: <reason>' for each skill the gate does not\n"
               "pass: its pass-rate lift (with minus without, per distinct case, failures counted as losses)\n"
               "must be credibly above X by a one-sided betting test at 0.05, Holm-adjusted across the\n"
               "study's skills (--per-skill: each at 0.05, unadjusted), with at least 5 cases won, no harm\n"
               "on should-not-use cases and a null arm (study.controls=[null]) consistent with 0; 'null arm\n"
               "not run' when the study has none.\n"
               "The rule with examples: docs/gate.md. The report is written either way.")
    p.add_argument("results_dir", nargs="?", type=Path,
                   help="a study output dir (outputs/<study>) or a multirun dir whose subfolders are study dirs")
    p.add_argument("--skillsbench", type=Path, metavar="REGISTRY",
                   help="report SkillsBench's public results-registry.json instead of a study")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help=f"where to write the report (default: <results-dir>/report, or {DEFAULT_SKILLSBENCH_OUT})")
    p.add_argument("--paper", action=argparse.BooleanOptionalAction, default=None,
                   help="also write paper.html: the ACES paper's figures with its reported values beside the "
                        "study's (default: on for study=aces_paper results)")
    gate = p.add_argument_group("CI gate")
    gate.add_argument("--fail-under-lift", type=float, metavar="X",
                      help="exit 1 unless every skill's pass-rate lift is credibly above X (e.g. 0.05) by the "
                           "gate's rule (docs/gate.md)")
    gate.add_argument("--outcome", choices=OUTCOMES, default=OUTCOME, help=argparse.SUPPRESS)
    family = gate.add_mutually_exclusive_group()
    family.add_argument("--lower-bound", action="store_true",
                        help="family-wise bounds: Holm across the study's skills (the default; kept for scripts "
                             "that pass it). Each skill's interval is printed either way")
    family.add_argument("--per-skill", action="store_true",
                        help="test each skill at alpha on its own (unadjusted across skills; labelled so)")
    gate.add_argument("--min-cases", type=int, metavar="N",
                      help="distinct cases a skill must win by more than X (default: the study's study.gate.min_cases, 5)")
    gate.add_argument("--alpha", type=float, metavar="A",
                      help="one-sided level of the test (default: the study's study.gate.alpha, 0.05)")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if (args.results_dir is None) == (args.skillsbench is None):
        raise ReportError("give either a results dir or --skillsbench <results-registry.json>, not both or neither",
                          where="aces-bench report",
                          fix="e.g. `aces-bench report outputs/demo` or `aces-bench report --skillsbench results-registry.json`")
    gating = args.fail_under_lift is not None
    if not gating and (args.lower_bound or args.per_skill or args.outcome != OUTCOME or args.min_cases is not None
                       or args.alpha is not None):
        raise ReportError("--lower-bound, --per-skill, --min-cases and --alpha only apply to the CI gate",
                          where="aces-bench report", fix="add --fail-under-lift X, or drop them")
    if args.outcome != OUTCOME:
        raise ReportError(f"--outcome {args.outcome}: the gate is one rule, on the graded pass (final_pass) per case",
                          where="aces-bench report --fail-under-lift",
                          fix="drop --outcome; the report shows every outcome's lift (docs/gate.md)")
    if gating and not -1 < args.fail_under_lift < 1:
        raise ReportError(f"--fail-under-lift {args.fail_under_lift:g} is not a lift a skill can exceed",
                          where="aces-bench report", fix="give a threshold between -1 and 1, e.g. 0.05")
    if args.min_cases is not None and args.min_cases < 1:
        raise ReportError("--min-cases must be at least 1", where="aces-bench report", fix="e.g. --min-cases 5")
    if args.alpha is not None and not 0 < args.alpha < 1:
        raise ReportError("--alpha must be between 0 and 1", where="aces-bench report", fix="e.g. --alpha 0.05")
    if args.skillsbench is not None:
        if gating:
            raise ReportError("--fail-under-lift gates a study's skills; SkillsBench's registry has no skills to gate",
                              where="aces-bench report --skillsbench", fix="gate a study dir instead")
        from aces_bench.analysis.external import build_skillsbench_report
        from aces_bench.reports.external import headline_text

        index, headline = build_skillsbench_report(args.skillsbench, args.out or DEFAULT_SKILLSBENCH_OUT)
        print(headline_text(headline))
        print(f"report: {index}")
        return 0
    # Importing the report's libraries (pandas, scipy, matplotlib) makes only long-lived
    # objects: the collector's passes over them meanwhile find nothing (~0.3 s of CPU).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from aces_bench.analysis.report import build_report
    finally:
        if collecting:
            gc.enable()

    index = build_report(args.results_dir, out_dir=args.out, paper=args.paper)
    print(f"report: {index}")
    if (index.parent / "paper.html").is_file():
        print(f"paper figures: {index.parent / 'paper.html'}")
    if not gating:
        return 0
    family = "none" if args.per_skill else "holm" if args.lower_bound else None
    return _gate(index.parent, args.fail_under_lift, family, args.min_cases, args.alpha)


def _gate(report_dir: Path, threshold: float, family: str | None, min_cases: int | None,
          alpha: float | None) -> int:
    from aces_bench.analysis.gate import gate_failures, gate_verdicts, null_arm_failures, null_arm_status, settings_for
    from aces_bench.records.summary import read_summary
    from aces_bench.reports.build import SUMMARY_FILE
    from aces_bench.reports.gate import describe, family_text

    summary = read_summary(report_dir / SUMMARY_FILE)
    if summary.sequential:
        return _sequential_gate(summary, threshold)
    settings = settings_for(summary, threshold=threshold, family=family, min_cases=min_cases, alpha=alpha)
    failures = gate_failures(summary, threshold=threshold, family=family, min_cases=min_cases, alpha=alpha)
    null_failures = null_arm_failures(summary)
    for f in failures + null_failures:
        print(f.line(), file=sys.stderr)
    failing = {f.skill for f in failures}
    verdicts = gate_verdicts(summary, settings)
    for v in verdicts:
        if v.passed and v.skill not in failing:
            # A pass shows what it rests on: the test, its exact p and the cases.
            print(f"PASS {v.skill}: {describe(v)}")
    n = len(summary.gate_cases)
    rule = (f"pass-rate lift credibly above {threshold:+.3f} (one-sided; {family_text(settings, verdicts)}), at least {settings.min_cases} cases won, "
            "no harm on should-not-use cases, null arm consistent with 0 where it ran")
    print(f"gate: {null_arm_status(summary)}")
    if failures or null_failures:
        if failures:
            print(f"gate: {len(failures)} of {n} skill(s) fail: {rule}", file=sys.stderr)
        return 1
    print(f"gate: all {n} skill(s) pass: {rule}")
    return 0


def _sequential_gate(summary, threshold: float) -> int:
    """A sequential study is gated by its own decisions: a fixed-design bound recomputed on
    trials stopped early is not valid, so another threshold than the design's is refused."""
    from aces_bench.core.errors import ReportError

    rows = [r for r in summary.sequential if r.get("skill")]
    designed = sorted({r["threshold"] for r in rows if r.get("threshold") is not None})
    if any(abs(threshold - t) > 1e-12 for t in designed):
        raise ReportError(f"this sequential study was designed for the threshold {', '.join(f'{t:+.3f}' for t in designed)}"
                          f"; its trials stopped early, so a gate at {threshold:+.3f} would not be valid",
                          where="--fail-under-lift",
                          fix=f"gate at the designed threshold (--fail-under-lift {designed[0]:g}), or run the study "
                              "again with study.gate.threshold set to the one you need")
    failing = [r for r in rows if r["decision"] != "helps"]
    for r in failing:
        print(f"FAIL {r['skill']}: {r['decision_text']} ({r['reason']})", file=sys.stderr)
    if failing:
        print(f"gate: {len(failing)} of {len(rows)} skill(s) not shown to help (sequential gate)", file=sys.stderr)
        return 1
    family = next((r["family"] for r in rows if r.get("family")), "1 skill")
    print(f"gate: all {len(rows)} skill(s) help (sequential gate, threshold {threshold:+.3f}, family: {family})")
    return 0
