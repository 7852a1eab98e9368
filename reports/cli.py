"""``aces-bench report``: regenerate a report from stored results, or report SkillsBench's registry.

    aces-bench report <results-dir> [--out DIR] [--fail-under-lift X [--outcome O] [--lower-bound]]
    aces-bench report --skillsbench <results-registry.json> [--out DIR]

With ``--fail-under-lift`` the command is a CI gate: exit 1, one line per failing
skill, when a skill's lift (or its 95% CI lower bound) is below X, or when the null
calibration arm's interval excludes 0 (``reports/gate.py``); exit 0 otherwise. A study
without a null arm is said to have none ("null arm not run"), never passed on it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from aces_bench.errors import ReportError
from aces_bench.stats.pairing import OUTCOME, OUTCOMES

DEFAULT_SKILLSBENCH_OUT = Path("outputs/skillsbench/report")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aces-bench report", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Regenerate the report from stored results (no trial is rerun).",
        epilog="CI gate for skill changes:\n"
               "  aces-bench report outputs/my-study --fail-under-lift 0.05\n"
               "  aces-bench report outputs/my-study --fail-under-lift 0 --lower-bound --outcome reward\n"
               "exits 1 and prints 'FAIL <skill>: <reason>' for each skill whose lift (with --lower-bound:\n"
               "the lower end of its 95% paired CI) is below the threshold, or cannot be computed\n"
               "(no scored pair, or no CI), or 'FAIL null arm (<skill>): ...' when the null calibration arm\n"
               "(study.controls=[null]) has an interval excluding 0; exits 0 when every check passes, and says\n"
               "'null arm not run' when the study has none. The report is written either way.")
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
                      help="exit 1 when any skill's lift is below X (on the outcome's scale, e.g. 0.05)")
    gate.add_argument("--outcome", choices=OUTCOMES, default=OUTCOME,
                      help=f"outcome the gate checks (default: {OUTCOME}, the task outcome: verifier reward "
                           "where the case has checks, else the judged outcome; composite mixes in process "
                           "metrics the baseline cannot earn)")
    gate.add_argument("--lower-bound", action="store_true",
                      help="compare the lower bound of each skill's 95%% paired CI with X instead of the lift")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if (args.results_dir is None) == (args.skillsbench is None):
        raise ReportError("give either a results dir or --skillsbench <results-registry.json>, not both or neither",
                          where="aces-bench report",
                          fix="e.g. `aces-bench report outputs/demo` or `aces-bench report --skillsbench results-registry.json`")
    gating = args.fail_under_lift is not None
    if not gating and (args.lower_bound or args.outcome != OUTCOME):
        raise ReportError("--outcome and --lower-bound only apply to the CI gate", where="aces-bench report",
                          fix="add --fail-under-lift X, or drop them")
    if args.skillsbench is not None:
        if gating:
            raise ReportError("--fail-under-lift gates a study's skills; SkillsBench's registry has no skills to gate",
                              where="aces-bench report --skillsbench", fix="gate a study dir instead")
        from aces_bench.reports.external import build_skillsbench_report, headline_text

        index, headline = build_skillsbench_report(args.skillsbench, args.out or DEFAULT_SKILLSBENCH_OUT)
        print(headline_text(headline))
        print(f"report: {index}")
        return 0
    from aces_bench.reports.build import build_report

    index = build_report(args.results_dir, out_dir=args.out, paper=args.paper)
    print(f"report: {index}")
    if (index.parent / "paper.html").is_file():
        print(f"paper figures: {index.parent / 'paper.html'}")
    if not gating:
        return 0
    return _gate(index.parent, args.fail_under_lift, args.outcome, args.lower_bound)


def _gate(report_dir: Path, threshold: float, outcome: str, lower_bound: bool) -> int:
    from aces_bench.reports.build import SUMMARY_FILE
    from aces_bench.reports.gate import gate_failures, null_arm_failures, null_arm_status
    from aces_bench.reports.summary import read_summary

    summary = read_summary(report_dir / SUMMARY_FILE)
    failures = gate_failures(summary, threshold=threshold, outcome=outcome, lower_bound=lower_bound)
    null_failures = null_arm_failures(summary, outcome=outcome)
    adjustments = sorted({r.adjustment for r in summary.by_skill if r.outcome == outcome and r.adjustment})
    what = f"adjusted CI lower bound ({'; '.join(adjustments) or 'no interval'})" if lower_bound else "lift"
    for f in failures:
        print(f.line(), file=sys.stderr)
    for f in null_failures:
        print(f.line(), file=sys.stderr)
    n = len({r.group["skill"] for r in summary.by_skill})
    null_line = null_arm_status(summary, outcome=outcome)
    print(f"gate: {null_line}")
    if failures or null_failures:
        if failures:
            print(f"gate: {len(failures)} of {n} skill(s) below {outcome} {what} {threshold:+.3f}", file=sys.stderr)
        return 1
    print(f"gate: all {n} skill(s) at or above {outcome} {what} {threshold:+.3f}")
    return 0
