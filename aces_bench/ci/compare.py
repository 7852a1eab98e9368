"""The current run against the stored last good run: per case, paired by case key.

A regression is judged by a paired interval, not by a raw difference: for each skill,
the per-case differences (current - last good) of the with-skill outcome give a mean
and a t interval; the skill regressed when the interval lies wholly below 0. With fewer
than two paired cases there is no interval and the skill is "not judged" (stated).
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
from pydantic import BaseModel
from scipy import stats as sps

from aces_bench.records.study import KINDS
from aces_bench.records.trials import read_trials_table
from aces_bench.stats.pairing import outcome_values

CASE = ["skill", "case_id", "harness", "model", "workspace_mode", "decoy_set"]
PROVENANCE = KINDS["provenance"].file  # the study's provenance, kept with the baseline
BASELINE_FILES = ("trials.parquet", "summary.json", PROVENANCE)


class SkillComparison(BaseModel):
    skill: str
    n_cases: int
    mean_diff: float | None
    ci_lo: float | None
    ci_hi: float | None
    status: str  # regressed | improved | no significant change | not judged: <why> | no baseline
    worse_cases: list[str] = []


def case_outcomes(trials: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """Mean with-skill outcome per case (attempts averaged; unscored attempts left out)."""
    w = trials.loc[trials["condition"] == "with_skill"]
    w = w.assign(value=outcome_values(w, outcome))
    return w.dropna(subset=["value"]).groupby(CASE, dropna=False)["value"].mean().reset_index()


def compare(current: pd.DataFrame, baseline: pd.DataFrame | None, skills: list[str], outcome: str,
            level: float = 0.95) -> list[SkillComparison]:
    out = []
    now = case_outcomes(current, outcome)
    before = case_outcomes(baseline, outcome) if baseline is not None else None
    for skill in skills:
        if before is None or not (before["skill"] == skill).any():
            out.append(SkillComparison(skill=skill, n_cases=0, mean_diff=None, ci_lo=None, ci_hi=None,
                                       status="no baseline: the last good run has no cases of this skill"))
            continue
        joined = now.loc[now["skill"] == skill].merge(before.loc[before["skill"] == skill], on=CASE,
                                                      suffixes=("_now", "_before"))
        d = (joined["value_now"] - joined["value_before"]).to_numpy(float)
        worse = joined.loc[d < 0, "case_id"].astype(str).tolist()
        if len(d) < 2:
            out.append(SkillComparison(skill=skill, n_cases=len(d), mean_diff=float(d.mean()) if len(d) else None,
                                       ci_lo=None, ci_hi=None, worse_cases=worse,
                                       status=f"not judged: {len(d)} paired case(s), an interval needs 2 or more"))
            continue
        mean, sd = float(d.mean()), float(d.std(ddof=1))
        half = float(sps.t.ppf(0.5 + level / 2, len(d) - 1)) * sd / math.sqrt(len(d))
        lo, hi = mean - half, mean + half
        status = "regressed" if hi < 0 else "improved" if lo > 0 else "no significant change"
        out.append(SkillComparison(skill=skill, n_cases=len(d), mean_diff=mean, ci_lo=lo, ci_hi=hi, status=status,
                                   worse_cases=worse))
    return out


def load_baseline(path: Path) -> pd.DataFrame | None:
    return read_trials_table(path) if (path / "trials.parquet").is_file() else None


def store_baseline(run_dir: Path, report_dir: Path, baseline: Path) -> None:
    """Keep this run as the last good one: its skills' rows replace theirs in the stored
    trials table (other skills keep their last good rows); summary and provenance too."""
    from aces_bench.core.io import write_frame

    baseline.mkdir(parents=True, exist_ok=True)
    now = read_trials_table(run_dir)
    old = load_baseline(baseline)
    if old is not None:
        now = pd.concat([old.loc[~old["skill"].isin(set(now["skill"]))], now], ignore_index=True)
    write_frame(baseline / "trials.parquet", now)
    for name, src in (("summary.json", report_dir / "summary.json"), (PROVENANCE, run_dir / PROVENANCE)):
        if src.is_file():
            tmp = baseline / f".{name}.tmp"
            shutil.copyfile(src, tmp)
            tmp.replace(baseline / name)
