"""What a report figure is drawn from and what drawing it gives, apart from the drawing
code (``figures.py``) so that a rebuild whose figures are remembered (``figure_set.py``)
never imports matplotlib's plotting modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from aces_bench.records.stats import StudyStats
from aces_bench.records.summary import StaticLiveSection
from aces_bench.records.trials import positive_cases
from aces_bench.reports.analysis import AnalysisSet, AnalysisSets, analysis_sets
from aces_bench.reports.standin import stand_ins
from aces_bench.stats import lift_table


@dataclass
class FigureOutcome:
    name: str
    title: str
    caption: str = ""
    paths: dict[str, Path] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def svg(self) -> Path | None:
        return self.paths.get("svg")


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
