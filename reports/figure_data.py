"""What a report figure is drawn from and what drawing it gives, apart from the drawing
code (``figures.py``) so that a rebuild whose figures are remembered (``figure_set.py``)
never imports matplotlib's plotting modules.

The analysis computes, before anything is drawn, every table the figures and the paper
page draw (``aces_bench.analysis.figure_data``: ``figure_data``, ``paper_tables``). The
records below hold them as plain data (``FigureData`` with its ``FigureTables``, and the
paper page's ``PaperTables``), one field per thing a figure draws: the drawing code only
reads fields, and a table a figure asks for that was not built is an ``AttributeError``,
never an empty plot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict

from aces_bench.records.stats import Correlation, StatTable, StudyStats
from aces_bench.records.summary import StaticLiveSection
from aces_bench.reports.reported import ScanView


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


class LiftView(BaseModel):
    """One lift table as a figure draws it: the rows of ``aces_bench.stats.lift_table``
    (or, for routing stress, one pooled row per number of visible skills), the analysis
    set they were computed on (as a caption names it) and that set's stand-ins."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: StatTable
    description: str
    stand_in: list[str]


class StressView(BaseModel):
    """Routing stress (its arm, or the headline when the study has none) on one outcome:
    the lift per number of skills the agent saw (``visible``) and the mean with-skill wall
    time in seconds per number (empty when not recorded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lift: LiftView
    wall: dict[int, float]


class FigureTables(BaseModel):
    """Every table the report's figures draw, computed by the analysis (and remembered
    between builds of an unchanged study, ``memo.remember``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    stand_in: list[str]  # the headline set's stand-ins on the headline outcome
    composite_stand_in: list[str]  # ... on the composite
    harnesses: list[str]  # the harnesses of the headline's positive pairs
    skill_harness: LiftView  # headline outcome by (skill, harness)
    harness_outcome: LiftView  # headline outcome by harness
    cells: LiftView  # headline outcome by (harness, model) over the cells set
    model_sweep: LiftView  # headline outcome by (harness, model) over the model slice
    stress: StressView | None  # None: the trials table has no n_visible_skills column


class PaperTables(BaseModel):
    """What the paper page draws beyond the report's figures: composite and reward lifts
    per harness, routing stress on the composite (the paper's statistic), Spearman's rho
    of the Tier 1 and Tier 2 scores (None when no skill has both), the page's one
    static scan (None when none ran) and the paper's reported figures it is set against
    (``reported.load_reported``, read once)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    harness_composite: LiftView
    harness_reward: LiftView
    stress: StressView | None
    structural_vs_judge: Correlation | None
    scan: ScanView | None
    reported: dict[str, Any]


@dataclass(frozen=True)
class FigureData:
    """What a figure is drawn from: the study's statistics, the headline set's trials (what
    a plugin's figure reads, docs/extending.md), every arm's trials, the headline outcome,
    the interval level in percent, the static-vs-live section, the headline set as captions
    name it and the tables the analysis computed."""

    stats: StudyStats
    trials: pd.DataFrame
    study_trials: pd.DataFrame
    outcome: str
    pct: int
    static: StaticLiveSection | None
    headline: str
    tables: FigureTables
