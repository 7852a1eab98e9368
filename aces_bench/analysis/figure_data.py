"""The figure data of a report: what every figure and the paper page are drawn from.

``FigureInputs`` holds the headline statistics, the headline set's positive pairs and
trials and every analysis set, and computes each lift table a figure asks for with the
headline's own computation (``aces_bench.stats.lift_table``); the drawing code in
``aces_bench.reports`` only reads it (``reports.figure_data.FigureData``).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from aces_bench.analysis.sets import AnalysisSet, AnalysisSets, analysis_sets, pooled
from aces_bench.records.stats import Correlation, StudyStats
from aces_bench.records.summary import StaticLiveSection
from aces_bench.records.trials import positive_cases
from aces_bench.reports.standin import stand_ins
from aces_bench.stats import lift_table, outcome_values, spearman_ci


@dataclass
class FigureInputs:
    """What the figures read: the headline statistics, the headline set's positive pairs
    and trials, and every analysis set (built from ``trials`` when not given)."""

    stats: StudyStats
    pairs: pd.DataFrame
    trials: pd.DataFrame
    static: StaticLiveSection | None = None
    sets: AnalysisSets | None = None
    offline_runs: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.pairs = positive_cases(self.pairs)  # negative controls are never in a lift
        if self.sets is None:
            self.sets = analysis_sets(self.trials)

    @property
    def outcome(self) -> str:
        return self.stats.settings.headline_outcome

    @property
    def level(self) -> float:
        return self.stats.settings.level

    @property
    def headline(self) -> AnalysisSet:
        assert self.sets is not None
        return self.sets.headline

    def lift(self, by: tuple[str, ...], outcomes: tuple[str, ...] | None = None,
             pairs: pd.DataFrame | None = None) -> pd.DataFrame:
        table = lift_table(self.pairs if pairs is None else pairs, by=by, outcomes=outcomes or (self.outcome,),
                           level=self.level)
        return table

    def stand_in(self, trials: pd.DataFrame | None = None, outcome: str | None = None) -> list[str]:
        return stand_ins(self.trials if trials is None else trials, self.offline_runs, outcome or self.outcome)

    @property
    def pct(self) -> int:
        return int(round(self.level * 100))

    def stress_table(self, s: AnalysisSet, outcome: str) -> pd.DataFrame:
        """Per visible-skill count: the pooled lift (the headline's computation) on its pairs."""
        pairs = s.pairs.loc[s.pairs["n_visible_skills_with"].notna()] if "n_visible_skills_with" in s.pairs else s.pairs.iloc[0:0]
        rows = []
        for v in sorted(pairs["n_visible_skills_with"].astype(int).unique()):
            part = pairs.loc[pairs["n_visible_skills_with"].astype(int) == v]
            row = pooled(part, (outcome,), self.level).iloc[0].to_dict()
            rows.append({"visible": int(v), **row})
        return pd.DataFrame(rows, columns=["visible", "outcome", "n", "lift", "ci_lo", "ci_hi", "ci_method", "n_cases"])

    def outcome_values(self, trials: pd.DataFrame, outcome: str) -> pd.Series:
        """Per-trial value of ``outcome`` as float (``aces_bench.stats.outcome_values``)."""
        return outcome_values(trials, outcome)

    def spearman(self, x, y, *, x_name: str, y_name: str) -> Correlation:
        """Spearman's rho of two aligned series with its interval at the report's level."""
        return spearman_ci(x, y, x_name=x_name, y_name=y_name, level=self.level)
