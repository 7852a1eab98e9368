"""The gate's record: what it read about each skill (``GateCases``) and what it decided
(``GateVerdict``), as summary.json stores them. ``aces_bench.stats.gate`` decides; the
report, ``aces-bench ci`` and the sequential ledger read the verdicts from here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.gate import GateSettings, Verdict


class NegativeCase(BaseModel):
    """One should-not-use case as the regression check reads it: the pass of every decided
    trial of each arm, and how many with-skill trials activated the skill and failed."""

    model_config = ConfigDict(frozen=True)

    case_id: str
    with_skill: list[float]
    baseline: list[float]
    activated_failures: int = 0

    def regression(self) -> str | None:
        """Why this case is a regression, or None: the baseline passed it every time and the
        skill failed it every time, or a trial that activated the skill failed it."""
        if not self.baseline or min(self.baseline) < 1 or not self.with_skill:
            return None
        if max(self.with_skill) <= 0:
            return f"{self.case_id} (failed in all {len(self.with_skill)} with-skill attempt(s))"
        if self.activated_failures:
            return f"{self.case_id} ({self.activated_failures} with-skill trial(s) activated the skill and failed)"
        return None


class GateCases(BaseModel):
    """What the gate reads about one skill: one value per distinct case, nothing else.

    ``positive``: per positive case, the mean paired difference of final_pass (with
    skill minus baseline, in [-1, 1]); ``negative``: the same on should-not-use cases,
    with ``negative_cases`` their per-attempt passes by case id; ``null``: per case, null
    arm minus baseline (None: the null arm did not run). The rest is shown with the
    verdict, never decides it.
    """

    model_config = ConfigDict(frozen=True)

    skill: str
    positive: list[float]
    negative: list[float] = Field(default_factory=list)
    negative_cases: list[NegativeCase] = Field(default_factory=list)
    null: list[float] | None = None
    negative_pass_with: float | None = None
    negative_pass_base: float | None = None
    false_activation: tuple[int, int] | None = Field(default=None, description="(activated, known) on negatives")
    n_excluded_pairs: int = Field(default=0, description="pairs left out: infrastructure failure after retries, "
                                  "never run, or a side with no pass decided")
    worst_case_lift: float | None = Field(default=None, description="the lift with every left-out side at its worst "
                                          "for the skill (``worst_case_lift``); None when nothing is left out")


class HarmCheck(BaseModel):
    n_cases: int
    lift: float | None
    p_value: float | None
    harms: bool
    regressions: list[str] = Field(default_factory=list, description="should-not-use cases the skill broke, by id")
    pass_with: float | None = None
    pass_base: float | None = None
    false_activation: float | None = None
    false_activation_n: int | None = None


class NullCheck(BaseModel):
    run: bool
    n_cases: int = 0
    lift: float | None = None
    p_value: float | None = None
    consistent: bool | None = None


class GateVerdict(BaseModel):
    """One skill's verdict, with everything it rests on."""

    skill: str
    verdict: Verdict
    passed: bool
    reason: str
    test: str
    p_value: float | None
    p_harm: float | None = Field(default=None, description="one-sided p (1/e) that the skill lowers the lift "
                                 "below 0 on its own cases")
    level: float | None = Field(default=None, description="the one-sided level the help test was decided at "
                                "(alpha, Holm-adjusted in a family)")
    harm_level: float | None = Field(default=None, description="the level the harm test on its own cases was "
                                     "decided at")
    family: str = Field(default="", description="the family the levels were adjusted over, in words")
    lower_bound: float | None = Field(default=None, description="the lower end of the interval the verdict was "
                                      "decided from: the largest threshold the help test rejects at ``level``")
    upper_bound: float | None = Field(default=None, description="its upper end: the smallest lift the harm-side "
                                      "test rejects at ``level``")
    lift: float | None
    n_cases: int
    n_wins: int
    n_losses: int
    n_ties: int
    n_excluded_pairs: int
    settings: GateSettings
    negative: HarmCheck
    null: NullCheck
