"""The analysis sets of a report: which trials each number is computed on, named.

Every number the report shows is computed on one named set of trials, always over
positive cases (negative controls are reported apart, as false activation) and always
paired and intervalled as the headline is (``aces_bench.stats.lift_table``: clustered
by case, two-way by case x configuration when five or more configurations are pooled):

- ``primary``: the headline. The trials whose ``arm`` is ``primary`` (a design's first
  arm: each harness with the target alone, isolation, no stress; a study that is not a
  design is this one arm). The verdict, the per-skill tests, the per-metric, per-harness
  and per-model tables, the calibration arms and the LaTeX tables use it.
- every other arm, reported apart: ``group`` (the same cells with decoys beside the
  target; the routing premium pairs it with primary), ``routing_stress`` (by the number
  of skills the agent saw), ``model_slice`` (by model), and any arm a design adds.
- ``cells``: the isolation cells of the primary and model-slice arms, for the harness x
  model views (one harness-model pair per cell).

A figure that needs an arm the study does not have (a routing-stress sweep that is not
a design) uses the primary set and says so. The sets' names and labels are the report's
(``aces_bench.reports.analysis``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from aces_bench.core.conditions import PAIRED
from aces_bench.core.order import natural_key
from aces_bench.records.study_data import ARMS_SEPARATOR
from aces_bench.records.trials import PRIMARY_ARM, positive_cases
from aces_bench.reports.analysis import CELLS_SET, GROUP_ARM, POSITIVE, SLICE_ARM, STRESS_ARM, arm_label
from aces_bench.stats import build_pairs, lift_table


@dataclass
class AnalysisSet:
    """One named set of trials; ``pairs`` are its positive with-skill/baseline pairs."""

    name: str
    label: str
    trials: pd.DataFrame
    fallback: str | None = None  # why this set stands in for an arm the study lacks
    _pairs: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def description(self) -> str:
        """What a caption says: the set, positive cases, and the fallback if any."""
        text = f"{self.label}, {POSITIVE}"
        return f"{text} ({self.fallback})" if self.fallback else text

    @property
    def pairs(self) -> pd.DataFrame:
        if self._pairs is None:
            rows = self.trials.loc[self.trials["condition"].isin(PAIRED)]
            self._pairs = positive_cases(build_pairs(rows)) if len(rows) else positive_cases(build_pairs(self.trials))
        return self._pairs

    @property
    def empty(self) -> bool:
        return not len(self.trials)


def arm_names(trials: pd.DataFrame) -> list[str]:
    """The arms of the table in the order their rows come (design order)."""
    if "arm" not in trials.columns:
        return [PRIMARY_ARM]
    return list(dict.fromkeys(trials["arm"].astype(str)))


def headline_arm(trials: pd.DataFrame) -> str:
    """``primary`` when the table has it, else its first arm."""
    names = arm_names(trials)
    return PRIMARY_ARM if PRIMARY_ARM in names else names[0]


def _listed(trials: pd.DataFrame, arm: str) -> pd.Series:
    """Rows whose member serves ``arm`` (first or not)."""
    if "arms" not in trials.columns:
        return trials["arm"].astype(str) == arm if "arm" in trials.columns else pd.Series(True, index=trials.index)
    return trials["arms"].astype(str).str.split(ARMS_SEPARATOR).map(lambda arms: arm in arms)


@dataclass
class AnalysisSets:
    """Every set a report computes on, from the study-level trials table."""

    trials: pd.DataFrame
    headline: AnalysisSet
    arms: dict[str, AnalysisSet]

    def get(self, name: str) -> AnalysisSet | None:
        return self.arms.get(name)

    def or_headline(self, name: str) -> AnalysisSet:
        """The arm when the study has it, else the headline set (saying so)."""
        found = self.arms.get(name)
        if found is not None and not found.empty:
            return found
        h = self.headline
        return AnalysisSet(h.name, h.label, h.trials, fallback=f"the study has no {arm_label(name)} arm")

    @property
    def routing(self) -> pd.DataFrame:
        """The trials the routing premium pairs: the headline's and the group arm's."""
        group = self.arms.get(GROUP_ARM)
        if group is None or group.name == self.headline.name:
            return self.headline.trials
        return pd.concat([self.headline.trials, group.trials], ignore_index=True)

    @property
    def cells(self) -> AnalysisSet:
        """Harness x model cells: the headline plus the model slice's other models."""
        slice_ = self.arms.get(SLICE_ARM)
        if slice_ is None:
            return self.headline
        rows = self.trials.loc[(self.trials["arm"].astype(str) == self.headline.name) | _listed(self.trials, SLICE_ARM)]
        return AnalysisSet(CELLS_SET, arm_label(CELLS_SET), rows)


def analysis_sets(trials: pd.DataFrame) -> AnalysisSets:
    """The headline set and one set per arm of ``trials`` (a study-level table)."""
    if "arm" not in trials.columns:
        trials = trials.assign(arm=PRIMARY_ARM, arms=PRIMARY_ARM)
    head = headline_arm(trials)
    arms: dict[str, AnalysisSet] = {}
    names = arm_names(trials)
    listed_only = [a for a in _all_listed(trials) if a not in names]
    for name in [*names, *listed_only]:
        rows = trials.loc[trials["arm"].astype(str) == name] if name == head else trials.loc[_listed(trials, name)]
        arms[name] = AnalysisSet(name, arm_label(name), rows)
    return AnalysisSets(trials=trials, headline=arms[head], arms=arms)


def _all_listed(trials: pd.DataFrame) -> list[str]:
    if "arms" not in trials.columns:
        return []
    return list(dict.fromkeys(a for text in trials["arms"].astype(str).unique() for a in text.split(ARMS_SEPARATOR)))


def levels(s: AnalysisSet) -> tuple[str, list]:
    """What an arm is reported by, and its levels in natural order: visible skills for
    routing stress, the model for the model slice, nothing (pooled) otherwise."""
    if s.name == STRESS_ARM and "n_visible_skills_with" in s.pairs.columns:
        values = s.pairs["n_visible_skills_with"].dropna().astype(int).unique().tolist()
        return "visible skills", sorted(values)
    if s.name == SLICE_ARM:
        return "model", sorted(s.pairs["model"].astype(str).unique().tolist(), key=natural_key)
    return "", []


def level_pairs(s: AnalysisSet, level) -> pd.DataFrame:
    by, _ = levels(s)
    p = s.pairs
    if by == "visible skills":
        return p.loc[p["n_visible_skills_with"].astype("Float64") == float(level)]
    if by == "model":
        return p.loc[p["model"].astype(str) == str(level)]
    return p


def pooled(pairs: pd.DataFrame, outcomes: tuple[str, ...], level: float) -> pd.DataFrame:
    """The headline's computation on any set: ``lift_table`` pooled (``by=()``)."""
    return lift_table(pairs, by=(), outcomes=outcomes, level=level)
