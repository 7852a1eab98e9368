"""A judge panel's agreement per judged metric, from the graded trials (``stats/agreement.py``).

Each judged metric of a panel study keeps every judge's score in its result's
``details["per_judge"]`` (``graders/judged.py``); the report shows, per metric, ICC(A,1)
with its interval and Cohen's kappa per pair of judges, beside the aggregation the
headline score used.
"""

from __future__ import annotations

from collections.abc import Iterable

from aces_bench.core.metrics import metric_names
from aces_bench.records.results import PER_JUDGE
from aces_bench.records.stats import AgreementRow
from aces_bench.records.trials import GradedTrial
from aces_bench.stats.agreement import panel_agreement


def judge_agreement(grades: Iterable[GradedTrial] | None, level: float = 0.95) -> list[AgreementRow]:
    """Per judged metric, the panel's agreement over the trials; [] for a single judge or no grades."""
    per_item: dict[str, list[dict[str, float | None]]] = {}
    how = "mean"
    judged = set(metric_names("judged"))
    for g in grades or []:
        for name, result in g.metrics.items():
            panel = result.details.get(PER_JUDGE) if name in judged else None
            if not panel:
                continue
            how = result.details.get("aggregate", how)
            per_item.setdefault(name, []).append({label: r.get("score") for label, r in panel.items()})
    return panel_agreement(per_item, how, level)
