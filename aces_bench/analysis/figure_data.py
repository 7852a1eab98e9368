"""The figure data of a report: what every figure and the paper page are drawn from.

``FigureInputs`` holds the headline statistics, the headline set's positive pairs and
trials and every analysis set, and computes a lift table with the headline's own
computation (``aces_bench.stats.lift_table``). Before anything is drawn,
``figure_data`` and ``paper_tables`` compute from it every table the figures and the
paper page draw, into plain records (``reports.figure_data``) the drawing code only reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from aces_bench.analysis.sets import AnalysisSet, AnalysisSets, analysis_sets, pooled
from aces_bench.analysis.standin import stand_ins
from aces_bench.core.outcomes import COMPOSITE, REWARD
from aces_bench.records.stats import Correlation, StatTable, StudyStats
from aces_bench.records.summary import StaticLiveSection
from aces_bench.records.trials import positive_cases
from aces_bench.reports.analysis import SLICE_ARM, STRESS_ARM
from aces_bench.reports.figure_data import FigureData, FigureTables, LiftView, PaperTables, StressView
from aces_bench.reports.memo import remember
from aces_bench.reports.reported import ScanView
from aces_bench.stats import lift_table, spearman_ci


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

    def spearman(self, x, y, *, x_name: str, y_name: str) -> Correlation:
        """Spearman's rho of two aligned series with its interval at the report's level."""
        return spearman_ci(x, y, x_name=x_name, y_name=y_name, level=self.level)


def stress_wall(s: AnalysisSet) -> pd.Series:
    """Mean with-skill wall time per number of skills the agent saw, over the set's
    positive cases, as its caption says: a should-not-use case's trial is no stress point."""
    trials = positive_cases(s.trials.loc[s.trials["condition"] == "with_skill"])
    if "wall_sec" not in trials or "n_visible_skills" not in trials:
        return pd.Series(dtype=float)
    timed = trials.dropna(subset=["wall_sec", "n_visible_skills"])
    return timed.groupby(timed["n_visible_skills"].astype(int))["wall_sec"].mean()


def _view(inp: FigureInputs, s: AnalysisSet, by: tuple[str, ...], outcome: str, pairs: pd.DataFrame | None = None
          ) -> LiftView:
    """``outcome``'s lift by ``by`` over ``s``'s pairs (``pairs`` when given), named with the set's stand-ins."""
    table = inp.lift(by, outcomes=(outcome,), pairs=s.pairs if pairs is None else pairs)
    return LiftView(table=StatTable.from_frame(table), description=s.description, stand_in=inp.stand_in(s.trials, outcome))


def _stress(inp: FigureInputs, outcome: str) -> StressView | None:
    s = inp.sets.or_headline(STRESS_ARM)
    if "n_visible_skills_with" not in s.pairs.columns:
        return None
    lift = LiftView(table=StatTable.from_frame(inp.stress_table(s, outcome)), description=s.description,
                    stand_in=inp.stand_in(s.trials, outcome))
    return StressView(lift=lift, wall={int(k): float(v) for k, v in stress_wall(s).items()})


def _figure_tables(inp: FigureInputs) -> FigureTables:
    head = inp.headline
    return FigureTables(
        stand_in=inp.stand_in(), composite_stand_in=inp.stand_in(outcome=COMPOSITE),
        harnesses=sorted(inp.pairs["harness"].astype(str).unique()),
        skill_harness=_view(inp, head, ("skill", "harness"), inp.outcome, pairs=inp.pairs),
        harness_outcome=_view(inp, head, ("harness",), inp.outcome),
        cells=_view(inp, inp.sets.cells, ("harness", "model"), inp.outcome),
        model_sweep=_view(inp, inp.sets.or_headline(SLICE_ARM), ("harness", "model"), inp.outcome),
        stress=_stress(inp, inp.outcome))


def figure_data(inp: FigureInputs) -> FigureData:
    """What the report's figures draw (``aces_bench.reports.figures``), every table computed
    now; the tables are remembered between builds (a function of the statistics, the pairs,
    the trials of every set and the offline runs), so a rebuild of an unchanged study
    neither computes them nor imports scipy."""
    sets = inp.sets
    assert sets is not None  # FigureInputs builds them
    tables = remember("figure tables", FigureTables, lambda: _figure_tables(inp),
                      inp.stats, inp.pairs, inp.trials, sets.trials, inp.offline_runs)
    return FigureData(stats=inp.stats, trials=inp.trials, study_trials=sets.trials, outcome=inp.outcome, pct=inp.pct,
                      static=inp.static, headline=inp.headline.description, tables=tables)


def _structural_vs_judge(inp: FigureInputs) -> Correlation | None:
    """Spearman's rho of the Tier 1 and Tier 2 scores of the skills that have both (the paper's Fig. 1(b))."""
    sec = inp.static
    both = [k for k in sec.skills if k.structural is not None and k.rubric is not None] if sec is not None else []
    if sec is None or sec.status != "ran" or not both:
        return None
    x = np.array([k.structural for k in both], dtype=float)
    y = np.array([k.rubric for k in both], dtype=float)
    return inp.spearman(x, y, x_name="structural", y_name="rubric")


def paper_tables(inp: FigureInputs, scan: ScanView | None, reported: dict[str, Any]) -> PaperTables:
    """What the paper page draws beyond the report's figures (``aces_bench.reports.paper``), computed now,
    with the paper's ``reported`` figures it is drawn against."""
    head = inp.headline
    return PaperTables(
        harness_composite=_view(inp, head, ("harness",), COMPOSITE, pairs=inp.pairs),
        harness_reward=_view(inp, head, ("harness",), REWARD),
        stress=_stress(inp, COMPOSITE), structural_vs_judge=_structural_vs_judge(inp), scan=scan,
        reported=reported)
