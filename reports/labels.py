"""Words a reader sees for the project's keys and values: one place for figures, HTML and LaTeX.

Outcome and metric keys (``outcome_per_protocol``, ``skill_execution``) become labels
("Task outcome, finished trials only", "Skill execution"); booleans read Yes/No; p-values read
"< 0.001" below a thousandth; counts are integers; other numbers get three decimals.
"""

from __future__ import annotations

import math
from typing import Any

from aces_bench.core.outcomes import COMPOSITE, OUTCOME, OUTCOME_ONLY, OUTCOME_PER_PROTOCOL, REWARD

OUTCOME_LABELS = {
    OUTCOME: "Task outcome",
    OUTCOME_PER_PROTOCOL: "Task outcome, finished trials only",
    REWARD: "Verifier reward",
    COMPOSITE: "Composite",
    OUTCOME_ONLY: "Outcome-only (judged)",
    "security": "Security",
    "skill_execution": "Skill execution",
    "skill_efficiency": "Skill efficiency",
    "accuracy": "Accuracy",
    "goal_accuracy": "Goal accuracy",
    "behavior_check": "Behavior check",
}
CONDITION_LABELS = {"with_skill": "with skill", "baseline": "baseline", "null": "null (baseline again)",
                    "placebo": "placebo", "forced": "forced (SKILL.md in the instruction)", "lift": "lift"}
VALUE_LABELS = {"isolation": "isolation", "group": "group", "exact": "exact"}
PROCESS_LABELS = {"activation": "skill activated", "script_execution": "expected script ran cleanly"}


def outcome_label(key: str) -> str:
    """``skill_execution`` -> "Skill execution"; an unknown key gets its words capitalised."""
    if key in OUTCOME_LABELS:
        return OUTCOME_LABELS[key]
    text = str(key).removeprefix("metric_").replace("_", " ")
    return text[:1].upper() + text[1:]


def is_p_column(column: str) -> bool:
    return column == "p_value" or column.startswith("p_") and column not in ("p_value_method",)


def p_text(p: float | None) -> str:
    """A p-value as a reader writes it: "< 0.001" below a thousandth, else three decimals."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def human_value(column: str, value: Any) -> str:
    """A table cell as text: Yes/No, p-values, labels for keys, integers for counts."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if column in ("outcome", "metric", "pass_outcome") and isinstance(value, str):
        return outcome_label(value)
    if column == "condition" and isinstance(value, str):
        return CONDITION_LABELS.get(value, value.replace("_", " "))
    if column == "process" and isinstance(value, str):
        return PROCESS_LABELS.get(value, value.replace("_", " "))
    if column == "metrics" and isinstance(value, str):  # "metric_accuracy+metric_goal_accuracy"
        return " + ".join(outcome_label(m) for m in value.split("+"))
    if isinstance(value, str):
        return value
    if is_p_column(column):
        return p_text(float(value))
    if isinstance(value, int) or (isinstance(value, float) and float(value).is_integer() and _count(column)):
        return f"{int(value)}"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _count(column: str) -> bool:
    return column.startswith("n_") or column in ("n", "k", "df", "n_resamples")


def source_label(source: str) -> str:
    """A dimension source (``skill_execution.activation``) in words ("Skill execution: activation")."""
    metric, _, sub = str(source).partition(".")
    return outcome_label(metric) + (f": {sub.replace('_', ' ')}" if sub else "")
