"""The study's analysis: everything the report states, computed from what the study stored.

Reads the trials table, grades, provenance and trajectories; computes the statistics
(``aces_bench.stats``), the gate's verdicts and why a skill got none, judge agreement,
routing confusion, static vs live with its scan, the sequential stops, every table the
figures draw and the paper page's scan and side-by-side rows, and the pages' trajectory
excerpts; writes summary.json and hands the rest to ``aces_bench.reports`` to render. ``build_report(results_dir)`` is the entry point the pipeline and
``aces-bench report`` (``cli``) call.

May import (pyproject's layers contract): ``reports`` and every layer below it (``static``,
``stats``, ``grading``, ``graders``, ``records``, ...).
"""

from aces_bench.analysis.report import build_report

__all__ = ["build_report"]
