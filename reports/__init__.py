"""Reports over stored study results: summary.json, figures, LaTeX tables and a static HTML site.

``build_report(results_dir)`` is the entry point the pipeline and ``aces-bench report`` call.

May import (pyproject's layers contract): ``static`` and every layer below it (``stats``,
``grading``, ``records``, ``graders``, ...).
"""

from aces_bench.reports.build import build_report

__all__ = ["build_report"]
