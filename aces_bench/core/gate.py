"""The gate's settings (``study.gate``; ``aces_bench.stats.gate`` applies them) and its
vocabulary (the verdicts, a sequential look's decisions and how they read): declared once
here, at the bottom, where the config, the gate, ``aces-bench ci`` and the report all read
them. A field's docstring is its description."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Family = Literal["holm", "none"]
Verdict = Literal["helps", "does not reach threshold", "harms", "harms should-not-use cases",
                  "null arm shows an effect", "not enough cases", "no data"]
PASSING: tuple[str, ...] = ("helps",)
"""The gate's verdicts, and the one that passes (``aces_bench.stats.gate`` decides them)."""
CONTINUE = "continue"
Decision = Verdict | Literal["continue"]
"""A look's decision: the gate's verdict vocabulary, or "continue" (undecided)."""
DECISION_TEXT = {
    "continue": "undecided: continues",
    "helps": "helps",
    "harms": "harms",
    "harms should-not-use cases": "harms should-not-use cases",
    "null arm shows an effect": "null arm shows an effect",
    "not enough cases": "not enough cases",
    "does not reach threshold": "does not reach threshold",
    "no data": "no data",
}


def interval_phrase(lo: float, hi: float, by: str) -> str:
    """How a decided interval reads: "[lo, hi]" and its kind."""
    return f"{by.split(' (')[0]} [{lo:+.3f}, {hi:+.3f}]"


class GateSettings(BaseModel):
    """The gate's parameters: the report's verdict column and ``aces-bench ci``;
    ``report --fail-under-lift X`` sets the threshold for its run (docs/gate.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    threshold: float = Field(default=0.0, gt=-1, lt=1)
    """Lift (pass rate, with minus without) the skill must credibly exceed."""
    alpha: float = Field(default=0.05, gt=0, lt=1)
    """One-sided level of the test that the skill helps."""
    min_cases: int = Field(default=5, ge=1)
    """Distinct positive cases the skill must win by more than the threshold."""
    harm_alpha: float = Field(default=0.2, gt=0, lt=1)
    """One-sided level of the harm tests (should-not-use cases)."""
    null_alpha: float = Field(default=0.05, gt=0, lt=1)
    """Two-sided level of the null arm's test."""
    family: Family = "holm"
    """Adjustment of "helps" and "harms" across the study's skills: holm, or none (each skill
    at ``alpha``, labelled as unadjusted)."""

    @field_validator("family", mode="before")
    @classmethod
    def _bonferroni_size(cls, value):
        """A summary.json written before Holm stored a Bonferroni family size: 1 was each skill
        at alpha ("none"); more was a family-wise adjustment, which Holm now makes."""
        if isinstance(value, int) and not isinstance(value, bool):
            return "none" if value <= 1 else "holm"
        return value

    @property
    def level(self) -> float:
        """The unadjusted one-sided level (a single skill's, or every skill's with family none)."""
        return self.alpha
