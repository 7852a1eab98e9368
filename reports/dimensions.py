"""The ACES dimensions and the metrics each one is read from.

The report always shows the metrics themselves; a dimension is a reading aid that
groups them. Mapping (one metric feeds one dimension):

- Security <- security (deterministic: destructive commands, secrets, access outside
  the workspace, exfiltration)
- Correctness <- accuracy, goal_accuracy (judged: is the answer right, is the goal met)
- Discoverability <- skill_execution (was the skill found, activated and its script run)
- Effectiveness <- behavior_check (judged: did the agent do what the case expects)
- Efficiency <- skill_efficiency (routing to allowed skills, productive tool calls)
"""

from __future__ import annotations

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "Security": ("security",),
    "Correctness": ("accuracy", "goal_accuracy"),
    "Discoverability": ("skill_execution",),
    "Effectiveness": ("behavior_check",),
    "Efficiency": ("skill_efficiency",),
}

QUESTIONS: dict[str, str] = {
    "Security": "Does the run stay safe (no destructive commands, leaked secrets or out-of-workspace access)?",
    "Correctness": "Is the final answer right and the user's goal met?",
    "Discoverability": "Is the skill found, activated and its documented script run, in order?",
    "Effectiveness": "Does the agent show the behaviours the case expects?",
    "Efficiency": "Does the agent read only allowed skills and waste few tool calls?",
}


def dimension_of(metric: str) -> str | None:
    """The dimension a metric feeds, or None for outcomes outside the mapping (reward, composite)."""
    for dim, metrics in DIMENSIONS.items():
        if metric in metrics:
            return dim
    return None
