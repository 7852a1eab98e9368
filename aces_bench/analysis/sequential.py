"""The report's view of sequential studies and baseline reuse, read from what each study stored.

``sequential.json`` (``aces_bench.study.sequential``) gives, per skill, when and why it
stopped, the gate's verdict it stopped with (``sequential_verdicts``: the report's verdict
column shows it instead of the gate re-read on trials stopped early) and the interval it
was decided from (the gate's betting interval at the look's level, anytime-valid over the
case rounds; the fixed-design interval is not valid on trials stopped early). ``reuse.json``
(``aces_bench.run.reuse``) gives how many baseline and null trials came from the store and
how old they were. Both are summarised per study folder (a sweep has one per member).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aces_bench.core.gate import DECISION_TEXT, interval_phrase


def _member_name(path: Path, root: Path) -> str:
    return "." if path == root else str(path.relative_to(root)) if path.is_relative_to(root) else path.name


def sequential_rows(paths: list[Path], root: Path) -> list[dict[str, Any]]:
    """One row per skill of every sequential study among ``paths`` (none for fixed studies)."""
    from aces_bench.records.sequential import LEDGER, Ledger

    rows = []
    for path in paths:
        ledger_path = path / LEDGER
        if not ledger_path.is_file():
            continue
        try:
            ledger = Ledger.model_validate_json(ledger_path.read_text())
        except ValueError:
            rows.append({"member": _member_name(path, root), "skill": None,
                         "reason": f"{ledger_path} is unreadable: re-run the study to rewrite it"})
            continue
        for name, sp in sorted(ledger.skills.items()):
            last = sp.looks[-1] if sp.looks else None
            rows.append({
                "member": _member_name(path, root), "skill": name, "decision": sp.decision,
                "decision_text": DECISION_TEXT.get(sp.decision, sp.decision), "reason": sp.reason(),
                "looks": len(sp.looks), "planned_looks": len(sp.design.looks()) if sp.design else 0,
                "threshold": sp.design.threshold if sp.design else None,
                "alpha": sp.design.alpha if sp.design else None,
                "family": last.family if last else None,
                "estimate": last.estimate if last else None, "p_value": last.p_value if last else None,
                "n_scored": last.n_scored if last else 0,
                **decided_view(last),
                "stage": last.label if last else None,
                "study_trials_run": ledger.trials_run, "study_trials_reused": ledger.trials_reused,
                "study_trials_fixed": ledger.trials_fixed, "stop_note": ledger.stop_note,
            })
    return rows


def decided_view(last) -> dict[str, Any]:
    """The interval a skill's last look decided from (``LookRecord.decided_*``), as the
    sequential table shows it: [lo, hi], the gate's betting interval at the look's level."""
    if last is None:
        return {"decided_lo": None, "decided_hi": None, "decided_by": None, "decided_text": ""}
    lo, hi, by = last.decided_lo, last.decided_hi, last.decided_by
    return {"decided_lo": lo, "decided_hi": hi, "decided_by": by,
            "decided_text": interval_phrase(lo, hi, by) if lo is not None and by else ""}


def sequential_verdicts(paths: list[Path]) -> dict[str, object]:
    """Per skill of a sequential study, the gate's verdict it stopped with (a ``GateVerdict``
    whose verdict, pass and reason are the sequential decision's)."""
    from aces_bench.records.sequential import LEDGER, Ledger

    out = {}
    for path in paths:
        try:
            ledger = Ledger.model_validate_json((path / LEDGER).read_text())
        except (OSError, ValueError):
            continue
        for name, sp in ledger.skills.items():
            last = sp.looks[-1] if sp.looks else None
            if last is None or last.gate is None or sp.decision == "continue":
                continue
            out[name] = last.gate.model_copy(update={"verdict": sp.decision, "passed": sp.passed,
                                                     "reason": f"sequential: {sp.reason()}"})
    return out


def reuse_rows(paths: list[Path], root: Path) -> list[dict[str, Any]]:
    """Per study folder that recorded one: its baseline-reuse plan, summarised."""
    from aces_bench.run.reuse import current_plan

    out = []
    for path in paths:
        plan = current_plan(path)
        if plan is not None:
            out.append({"member": _member_name(path, root), **plan.as_report()})
    return out


def study_paths(study) -> list[Path]:
    """The study folders of a loaded study (itself, or a sweep's or design's members)."""
    return sorted({Path(m.path) for m in study.members})


def gate_rows(summary) -> dict[str, dict[str, Any]]:
    """Per skill the sequential decision (one study folder); used by ``report --fail-under-lift``."""
    return {r["skill"]: r for r in summary.sequential if r.get("skill")}



