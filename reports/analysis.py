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
a design) uses the primary set and says so. This module names the sets and shows the arms'
rows; ``aces_bench.analysis.sets`` builds the sets and computes on them.
"""

from __future__ import annotations

from aces_bench.records.trials import PRIMARY_ARM

GROUP_ARM = "group"
STRESS_ARM = "routing_stress"
SLICE_ARM = "model_slice"
CELLS_SET = "cells"
ARM_LABELS = {
    PRIMARY_ARM: "primary arm (isolation, no stress)",
    GROUP_ARM: "group workspace (decoys beside the target)",
    STRESS_ARM: "routing stress",
    SLICE_ARM: "same-harness model slice",
    CELLS_SET: "isolation cells of the primary and model-slice arms",
}
POSITIVE = "positive cases"


def arm_label(name: str) -> str:
    return ARM_LABELS.get(name, f"arm {name}")


CALIBRATION_LABELS = {"null": "null arm (A/A): null - baseline", "placebo": "placebo: with skill - placebo",
                      "forced": "forced: forced - with skill (discovery gap)"}


def level_text(by: str, level: str | None) -> str:
    if level is None:
        return "pooled"
    return f"{level} {by}" if by == "visible skills" else f"{by} {level}"


def arm_views(summary) -> list[dict]:
    """One row per arm (and level) for the report's "Arms" table: the headline outcome
    and composite side by side, then the calibration arms (same pairing and interval)."""
    from aces_bench.core.outcomes import COMPOSITE

    o = summary.headline_outcome
    keyed: dict[tuple, dict] = {}
    head = summary.arms[0].arm if summary.arms else PRIMARY_ARM
    for r in summary.arms:
        view = keyed.setdefault((r.arm, r.level), {
            "arm": r.arm, "label": r.arm_label, "level": level_text(r.level_by, r.level), "set": r.analysis_set,
            "n_trials": r.n_trials, "stand_in": r.stand_in, "headline": r.arm == head and r.level is None,
            "kind": "design arm"})
        view[r.outcome if r.outcome in (o, COMPOSITE) else "other"] = r
        view["stand_in"] = sorted({*view["stand_in"], *r.stand_in})
    rows = [dict(v, main=v.get(o), composite=v.get(COMPOSITE)) for v in keyed.values()]
    for arm in summary.controls_run:
        main, comp = summary.control(arm, o), summary.control(arm, COMPOSITE)
        rows.append({"arm": arm, "label": CALIBRATION_LABELS.get(arm, arm), "level": "pooled",
                     "set": f"{summary.analysis_set}; calibration condition {arm}", "n_trials": None,
                     "stand_in": summary.stand_in, "headline": False, "kind": "calibration arm",
                     "main": main, "composite": comp})
    return rows
