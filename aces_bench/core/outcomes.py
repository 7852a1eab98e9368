"""The outcome names: what the stats layer pairs and the report shows, one spelling each.

An outcome is a per-trial number a lift is taken of: the task outcome (intention to
treat and per protocol), each registered metric, the composite, the outcome-only mean,
the verifier's reward and the decided pass. The names sit at the bottom so the stage
that computes the statistics and the report that renders them agree without either
importing the other.
"""

from __future__ import annotations

from collections.abc import Sequence

from aces_bench.core.metrics import metric_names

COMPOSITE = "composite"
OUTCOME_ONLY = "outcome_only"
REWARD = "reward"
OUTCOME = "outcome"
"""The task outcome, intention to treat (graders/outcome.py): a failure of the arm scores 0."""
OUTCOME_PER_PROTOCOL = "outcome_per_protocol"
"""Secondary view of ``outcome``: finished trials only (an arm's failures left out, not scored 0)."""
FINAL_PASS = "final_pass"
"""The one pass (``aces_bench/core/modes.py``) as 1/0: what pass@k, McNemar and the gate count."""


def outcomes() -> tuple[str, ...]:
    """Every outcome the stats layer knows: the task outcome, each registered metric, the composites, reward."""
    return (OUTCOME, OUTCOME_PER_PROTOCOL, *metric_names(), COMPOSITE, OUTCOME_ONLY, REWARD, FINAL_PASS)


class _Outcomes(Sequence[str]):
    """``outcomes()`` read when used, so a metric registered after import is an outcome too."""

    def __getitem__(self, i):  # type: ignore[override]
        return outcomes()[i]

    def __len__(self) -> int:
        return len(outcomes())

    def __repr__(self) -> str:
        return repr(outcomes())


OUTCOMES: Sequence[str] = _Outcomes()
