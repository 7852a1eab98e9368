"""Entry point of the deterministic grading layer.

``grade_deterministic(inp)`` builds the trajectory view once, reads the retained
artifacts once, runs every deterministic metric of the registry
(``aces_bench/core/metrics.py``: ``security``, ``skill_execution``, ``skill_efficiency``
and any registered since) and the ``self_correction`` section over them, and returns
every result with its evidence redacted. It never raises for agent behaviour; a missing trajectory or case
leaves the affected metrics unscored with the reason.
"""

from __future__ import annotations

from aces_bench.core.metrics import metrics
from aces_bench.graders.artifacts import ArtifactText, read_artifact_texts
from aces_bench.graders.base import GraderContext, GradingInput
from aces_bench.graders.patterns import PatternSet, load_patterns
from aces_bench.graders.redact import redact_value
from aces_bench.graders.self_correction import grade_self_correction
from aces_bench.graders.skill_execution import METRIC as SKILL_EXECUTION
from aces_bench.graders.tool_calls import TraceView, build_view
from aces_bench.records.results import MetricResult
from aces_bench.records.self_correction import METRIC as SELF_CORRECTION


def grade_deterministic(
    inp: GradingInput,
    *,
    patterns: PatternSet | None = None,
    artifacts: list[ArtifactText] | None = None,
    view: TraceView | None = None,
) -> dict[str, MetricResult]:
    """All deterministic metrics for one trial, keyed by metric name.

    ``artifacts`` defaults to the text files under ``inp.artifacts_dir``; ``view`` to
    ``build_view(inp.trajectory, inp.workdir)``. Pass them to reuse work.
    """
    ps = patterns or load_patterns()
    if view is None and inp.trajectory is not None:
        view = build_view(inp.trajectory, inp.workdir)
    notes: list[str] = []
    if artifacts is None:
        artifacts, notes = read_artifact_texts(inp.artifacts_dir)
    results: dict[str, MetricResult] = {}
    for m in metrics("deterministic"):
        ctx = GraderContext(view=view, artifacts=artifacts, artifact_notes=notes, patterns=ps, earlier=dict(results))
        results[m.name] = m.load_grader()(inp, ctx)
    # The self_correction section is not a metric: it reads skill_execution's verdict.
    results[SELF_CORRECTION] = grade_self_correction(inp, view, results.get(SKILL_EXECUTION))
    if view is not None and view.synthetic:
        results = {k: _note_synthetic(r) for k, r in results.items()}
    return {k: _redacted(r, ps) for k, r in results.items()}


def _note_synthetic(r: MetricResult) -> MetricResult:
    return r.model_copy(update={"details": {**r.details, "synthetic_trajectory": True}})


def _redacted(r: MetricResult, ps: PatternSet) -> MetricResult:
    """Evidence and details pass through redaction; scores are untouched."""
    return r.model_copy(update={
        "evidence": [e.model_copy(update={"detail": redact_value(e.detail, ps)}) for e in r.evidence],
        "details": redact_value(r.details, ps),
        "unscored_reason": redact_value(r.unscored_reason, ps) if r.unscored_reason else r.unscored_reason,
    })
