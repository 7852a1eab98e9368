"""Reports over stored study results: summary.json, figures, LaTeX tables and a static HTML site.

``build_report(results_dir)`` is the entry point the pipeline and ``aces-bench report`` call.
"""

from aces_bench.reports.build import build_report

__all__ = ["build_report"]
