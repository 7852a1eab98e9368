"""What a report figure is drawn from and what drawing it gives, apart from the drawing
code (``figures.py``) so that a rebuild whose figures are remembered (``figure_set.py``)
never imports matplotlib's plotting modules.

The figures read an analysis's figure data (``aces_bench.analysis.figure_data.FigureInputs``:
the statistics, the pairs, the analysis sets and every lift table a figure asks for); the
protocols below are what the drawing code may ask of it, so no figure computes a statistic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd

from aces_bench.records.stats import Correlation, StudyStats
from aces_bench.records.summary import StaticLiveSection


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


class ArmSet(Protocol):
    """One named set of trials (``aces_bench.analysis.sets.AnalysisSet``)."""

    name: str
    label: str
    trials: pd.DataFrame

    @property
    def description(self) -> str: ...

    @property
    def pairs(self) -> pd.DataFrame: ...

    @property
    def empty(self) -> bool: ...


class ArmSets(Protocol):
    """Every set of a report (``aces_bench.analysis.sets.AnalysisSets``)."""

    trials: pd.DataFrame
    headline: ArmSet
    arms: Mapping[str, ArmSet]

    def or_headline(self, name: str) -> ArmSet: ...

    @property
    def cells(self) -> ArmSet: ...


class FigureData(Protocol):
    """What the figures and the paper page read (``aces_bench.analysis.figure_data.FigureInputs``)."""

    stats: StudyStats
    pairs: pd.DataFrame
    trials: pd.DataFrame
    static: StaticLiveSection | None
    sets: ArmSets | None

    @property
    def outcome(self) -> str: ...

    @property
    def level(self) -> float: ...

    @property
    def pct(self) -> int: ...

    @property
    def headline(self) -> ArmSet: ...

    def lift(self, by: tuple[str, ...], outcomes: tuple[str, ...] | None = None,
             pairs: pd.DataFrame | None = None) -> pd.DataFrame: ...

    def stress_table(self, s: ArmSet, outcome: str) -> pd.DataFrame: ...

    def stand_in(self, trials: pd.DataFrame | None = None, outcome: str | None = None) -> list[str]: ...

    def outcome_values(self, trials: pd.DataFrame, outcome: str) -> pd.Series: ...

    def spearman(self, x, y, *, x_name: str, y_name: str) -> Correlation: ...
