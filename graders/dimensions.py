"""The five ACES dimensions, the composite and the outcome-only view, from the six metrics.

The mapping is data, declared by each metric in the registry (``Metric.dimensions``
in ``aces_bench/core/metrics.py``) and read through ``aces_bench.core.metrics.dimensions()``: each dimension is the
mean of the metric scores or metric sub-scores it lists that were scored on the trial. Sub-scores are used where
one metric feeds two dimensions, so no check is counted twice:

| dimension       | sources                                                           |
|-----------------|-------------------------------------------------------------------|
| Security        | security                                                          |
| Correctness     | accuracy, goal_accuracy                                           |
| Discoverability | skill_execution.activation, skill_efficiency.routing              |
| Effectiveness   | skill_execution.execution, .workflow_order, .error_recovery;       |
|                 | behavior_check                                                    |
| Efficiency      | skill_efficiency.tool_efficiency                                  |

Discoverability is whether the agent found the right skill (activated it, and read
no skill it should not have); Effectiveness whether, once found, the skill was used
as designed and the expected behaviours happened; Efficiency how much of the agent's
tool use was productive. Dimensions are a *view*: the composite stays the weighted
mean of the configured metrics (``GradingSpec.weight_of``, default equal weights), and the metrics
are always stored next to the dimensions.

Unscored is never 0: a source that was not scored is left out of its dimension's
mean, and a dimension with no scored source is None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from aces_bench.core.metrics import Source, dimensions, outcome_metrics
from aces_bench.records.results import MetricResult


def source_value(metrics: Mapping[str, MetricResult], src: Source) -> float | None:
    m = metrics.get(src.metric)
    if m is None or m.score is None:
        return None
    return m.score if src.sub is None else m.sub_scores.get(src.sub)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 6) if vals else None


def dimension_scores(metrics: Mapping[str, MetricResult]) -> dict[str, float | None]:
    """Every dimension, in ``DIMENSION_NAMES`` order: the mean of its scored sources, or None."""
    return {name: _mean(source_value(metrics, s) for s in sources) for name, sources in dimensions().items()}


def outcome_only(metrics: Mapping[str, MetricResult]) -> float | None:
    """Mean of the outcome metrics (accuracy, goal_accuracy) over those scored (the stats layer's ``outcome_only``)."""
    return _mean(source_value(metrics, Source(m)) for m in outcome_metrics())


def weighted_composite(
    metrics: Mapping[str, MetricResult], names: Iterable[str], weight_of: Callable[[str], float]
) -> float | None:
    """Weighted mean over the scored metrics among ``names``, weights renormalised; None when none scored."""
    total = weight_sum = 0.0
    for name in names:
        m = metrics.get(name)
        w = weight_of(name)
        if m is None or m.score is None or w <= 0:
            continue
        total += w * m.score
        weight_sum += w
    return total / weight_sum if weight_sum > 0 else None


def mapping_table() -> list[dict[str, str]]:
    """The mapping as rows (dimension, sources) for reports and summaries."""
    return [{"dimension": d, "sources": ", ".join(s.label for s in srcs)} for d, srcs in dimensions().items()]
