"""The report's rendering: figures, LaTeX tables and a static HTML site (with the paper
page), drawn from what ``aces_bench.analysis`` computed (summary.json and the views it
builds, ``build.ReportView``). ``build.render_report`` is the entry point the analysis calls.

May import (pyproject's layers contract): the layers below it, but never ``stats``,
``grading``, ``static`` or ``graders`` (a forbidden contract): a number shown is a number
the analysis stored.
"""
