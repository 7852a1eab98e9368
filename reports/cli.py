"""``aces-bench report``: regenerate a report from stored results, or report SkillsBench's registry.

    aces-bench report <results-dir> [--out DIR]
    aces-bench report --skillsbench <results-registry.json> [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aces_bench.errors import ReportError

DEFAULT_SKILLSBENCH_OUT = Path("outputs/skillsbench/report")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench report",
                                description="Regenerate the report from stored results (no trial is rerun).")
    p.add_argument("results_dir", nargs="?", type=Path,
                   help="a study output dir (outputs/<study>) or a multirun dir whose subfolders are study dirs")
    p.add_argument("--skillsbench", type=Path, metavar="REGISTRY",
                   help="report SkillsBench's public results-registry.json instead of a study")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help=f"where to write the report (default: <results-dir>/report, or {DEFAULT_SKILLSBENCH_OUT})")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if (args.results_dir is None) == (args.skillsbench is None):
        raise ReportError("give either a results dir or --skillsbench <results-registry.json>, not both or neither",
                          where="aces-bench report",
                          fix="e.g. `aces-bench report outputs/demo` or `aces-bench report --skillsbench results-registry.json`")
    if args.skillsbench is not None:
        from aces_bench.reports.external import build_skillsbench_report, headline_text

        index, headline = build_skillsbench_report(args.skillsbench, args.out or DEFAULT_SKILLSBENCH_OUT)
        print(headline_text(headline))
        print(f"report: {index}")
        return 0
    from aces_bench.reports.build import build_report

    index = build_report(args.results_dir, out_dir=args.out)
    print(f"report: {index}")
    return 0
