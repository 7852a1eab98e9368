"""The analysis sets' names and labels, and the arms' rows, as the report shows them.

Which trials each set holds, and why every number is computed on one named set, is
``aces_bench.analysis.sets``, which builds the sets and computes on them; this module
only names them and renders their rows.
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
