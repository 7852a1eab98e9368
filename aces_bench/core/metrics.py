"""The metric registry: the one list of aces-bench's metrics and what each one is.

Every place that needs "the metrics" reads it from here: the config's metric names
(``grading.metrics``), the trials-table columns (``metric_<name>``), the five ACES
dimensions, the short names of the terminal summary, the deterministic/judged split
and the outcome metrics behind ``outcome_only``. Adding a metric is its grader module
plus one ``register(Metric(...))`` (see docs/architecture.md).

The metrics are a ``Registry`` (``METRICS``, the registry type of every extension point,
in registration order; a plugin's ``register`` call adds one). This module imports only
the registry of aces-bench: the config layer reads it to validate metric names without
loading a grader. A grader is named by import path
(``"aces_bench.graders.security:grade"``) and loaded only when grading runs; a test
or a plugin may pass the function itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from aces_bench.core.registry import Registry

GRADER_VERSION = "1"
"""Version of the built-in graders, written into every task's metadata and every result."""

Kind = Literal["deterministic", "judged"]
KINDS: tuple[Kind, ...] = ("deterministic", "judged")

DIMENSION_NAMES = ("Security", "Correctness", "Discoverability", "Effectiveness", "Efficiency")
"""The five ACES dimensions, in the order every report shows them."""


@dataclass(frozen=True)
class Metric:
    """One metric: its name, who grades it and where its score counts.

    ``dimensions`` maps a dimension to the sources this metric gives it: ``None`` for
    the metric's score, a sub-score name for one of its sub-scores (so one metric can
    feed two dimensions without a check counted twice). ``outcome`` marks the metrics
    whose mean is ``outcome_only`` and that the report treats as task outcomes.
    """

    name: str
    kind: Kind
    grader: str | Callable[..., Any]
    short: str
    dimensions: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)
    outcome: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"metric name {self.name!r} must be an identifier (it becomes the column metric_<name>)")
        if self.kind not in KINDS:
            raise ValueError(f"metric {self.name}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        unknown = [d for d in self.dimensions if d not in DIMENSION_NAMES]
        if unknown:
            raise ValueError(f"metric {self.name}: unknown dimension(s) {unknown}; known: {', '.join(DIMENSION_NAMES)}")

    @property
    def column(self) -> str:
        return metric_column(self.name)

    def load_grader(self) -> Callable[..., Any]:
        """The grading function (imported on first use when named by path)."""
        if callable(self.grader):
            return self.grader
        module, _, attr = self.grader.partition(":")
        return getattr(importlib.import_module(module), attr)


METRICS: Registry[Metric] = Registry("metric", where="grading.metrics", ordered=True)


def register(metric: Metric) -> Metric:
    """Add ``metric`` to the registry (a name registered twice is an error; see ``unregister``)."""
    METRICS.register(metric.name, metric)
    return metric


def unregister(name: str) -> None:
    """Remove a metric (for tests and plugins that register one for a while)."""
    METRICS.unregister(name)


def metric(name: str) -> Metric:
    """The metric ``name``; an unknown one is a ConfigError listing the registered ones."""
    return METRICS.get(name)


def metrics(kind: Kind | None = None) -> tuple[Metric, ...]:
    """The registered metrics in registration order, optionally of one kind."""
    return tuple(m for _, m in METRICS.items() if kind is None or m.kind == kind)


def metric_names(kind: Kind | None = None) -> tuple[str, ...]:
    return tuple(m.name for m in metrics(kind))


def outcome_metrics() -> tuple[str, ...]:
    return tuple(m.name for m in metrics() if m.outcome)


def metric_column(name: str) -> str:
    """The trials-table column of a metric's score."""
    return f"metric_{name}"


def metric_columns() -> tuple[str, ...]:
    return tuple(metric_column(n) for n in metric_names())


def short_name(name: str) -> str:
    """The metric's short name (summary tables); an unregistered name (an author grader) stays as it is."""
    return METRICS.get(name).short if name in METRICS else name


@dataclass(frozen=True, slots=True)
class Source:
    """A metric's score (``sub=None``) or one of its sub-scores, as a dimension lists it."""

    metric: str
    sub: str | None = None

    @property
    def label(self) -> str:
        return self.metric if self.sub is None else f"{self.metric}.{self.sub}"


def dimensions() -> dict[str, tuple[Source, ...]]:
    """Each dimension's sources, in dimension order (``DIMENSION_NAMES``) then registration order."""
    out: dict[str, list[Source]] = {d: [] for d in DIMENSION_NAMES}
    for m in metrics():
        for dim, subs in m.dimensions.items():
            out[dim] += [Source(m.name, sub) for sub in subs]
    return {d: tuple(s) for d, s in out.items()}


# --- the built-in metrics (registration order is the order of columns and reports) -----

register(Metric(
    "security", "deterministic", "aces_bench.graders.security:grade", short="sec",
    dimensions={"Security": (None,)},
    description="no secret leaked, no dangerous command, nothing written outside the workspace",
))
register(Metric(
    "skill_execution", "deterministic", "aces_bench.graders.skill_execution:grade", short="exec",
    dimensions={"Discoverability": ("activation",),
                "Effectiveness": ("execution", "workflow_order", "error_recovery")},
    description="the target skill activated, its scripts run, in order, errors recovered",
))
register(Metric(
    "skill_efficiency", "deterministic", "aces_bench.graders.skill_efficiency:grade", short="eff",
    dimensions={"Discoverability": ("routing",), "Efficiency": ("tool_efficiency",)},
    description="no skill read that the trial may not read; productive tool use",
))
register(Metric(
    "accuracy", "judged", "aces_bench.graders.accuracy:grade", short="acc",
    dimensions={"Correctness": (None,)}, outcome=True,
    description="the final answer against the case's expected output",
))
register(Metric(
    "goal_accuracy", "judged", "aces_bench.graders.goal_accuracy:grade", short="goal",
    dimensions={"Correctness": (None,)}, outcome=True,
    description="the user's goal met, judged from the trajectory",
))
register(Metric(
    "behavior_check", "judged", "aces_bench.graders.behavior_check:grade", short="behav",
    dimensions={"Effectiveness": (None,)},
    description="the case's expected behaviours observed",
))
