"""``sequential.json``: a sequential study's designs, case orders and looks, as stored.

Written by ``aces_bench.study.sequential`` after every round (the looks decided by
``aces_bench.stats.sequential``), read back on resume and by the analysis that puts each
skill's stop in summary.json.
"""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.gate import CONTINUE, DECISION_TEXT, PASSING, Decision, GateSettings
from aces_bench.core.versioning import VersionedRecord
from aces_bench.records.gate import GateVerdict
from aces_bench.records.study import KINDS


class Look(BaseModel):
    """One planned look: after round ``index + 1``, the first ``n_cases`` cases of the order, every attempt."""

    model_config = ConfigDict(frozen=True)

    index: int
    n_cases: int
    final: bool

    @property
    def label(self) -> str:
        return f"round {self.index + 1} ({self.n_cases} case(s), every attempt)"


class SequentialDesign(BaseModel):
    """A skill's sequential gate, fixed before its first trial."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_cases: int = Field(ge=1, description="positive cases of the skill")
    n_attempts: int = Field(default=1, ge=1)
    gate: GateSettings = Field(default_factory=GateSettings, description="the gate's settings (study.gate)")
    round_cases: int | None = Field(default=None, ge=1, description="new cases per round (None: automatic)")
    futility_power: float | None = Field(
        default=0.05, gt=0.0, lt=1.0,
        description="a look that may stop for futility stops when the chance of passing at the last look on the "
                    "trend so far is below this (``conditional_power``; None: no futility stop); chosen on seed "
                    "1025, not on the reported seed 25 (docs/sequential.md)")
    futility_from: float = Field(default=0.25, gt=0.0, le=1.0, description="looks from this share of the cases on "
                                 "may stop for futility; chosen with ``futility_power``")

    @property
    def threshold(self) -> float:
        return self.gate.threshold

    @property
    def alpha(self) -> float:
        return self.gate.level

    @property
    def min_cases(self) -> int:
        return self.gate.min_cases

    @property
    def per_round(self) -> int:
        """New cases per round: ``round_cases``, else an eighth of the cases, rounded up."""
        if self.round_cases is not None:
            return self.round_cases
        return math.ceil(self.n_cases / 8)

    def looks(self) -> list[Look]:
        """Every planned look, in order."""
        ends = list(range(self.per_round, self.n_cases, self.per_round)) + [self.n_cases]
        return [Look(index=i, n_cases=n_k, final=n_k == self.n_cases) for i, n_k in enumerate(ends)]

    def schedule(self) -> list[tuple[int, int]]:
        """Per look: the (first, last exclusive) indices of the cases its round adds."""
        ends = [lk.n_cases for lk in self.looks()]
        return list(zip([0, *ends[:-1]], ends, strict=True))

    def futility_at(self, look: Look) -> bool:
        """Whether ``look`` may stop on the trend so far: not the last, and far enough into the cases."""
        return (self.futility_power is not None and not look.final
                and look.n_cases >= self.futility_from * self.n_cases)


class LookRecord(BaseModel):
    """What one look saw and decided (one entry of the study's sequential ledger)."""

    model_config = ConfigDict(frozen=True)

    index: int
    label: str
    n_cases: int
    n_scored: int
    estimate: float | None
    p_value: float | None = Field(default=None, description="the gate's help p-value, 1 / its e-value, on the "
                                  "cases so far")
    conditional_power: float | None = Field(default=None, description="at a look that may stop for futility: the "
                                            "chance of passing at the last look on the trend so far")
    decided_lo: float | None = Field(default=None, description="the interval the decision was read from: the gate's "
                                     "betting interval at the look's level (anytime-valid), lower end")
    decided_hi: float | None = None
    decided_by: str | None = None
    level: float | None = Field(default=None, description="the skill's one-sided level at this look: alpha, or "
                                "its Holm level in the study's family (``sequential_family``)")
    family: str = Field(default="1 skill", description="the family the level was adjusted over, in words")
    gate: GateVerdict | None = Field(default=None, description="the gate's verdict on the data so far")
    decision: Decision
    reason: str

    @property
    def stopped(self) -> bool:
        return self.decision != CONTINUE

    @property
    def passed(self) -> bool:
        return self.decision in PASSING


LEDGER = KINDS["sequential"].file


class SkillPlan(BaseModel):
    """One skill's design, case order and looks so far."""

    model_config = ConfigDict(frozen=True, ser_json_inf_nan="constants")

    skill: str
    design: SequentialDesign | None
    order: list[str]
    negatives: list[str]
    looks: list[LookRecord] = []
    stopped: str | None = None  # why the skill stopped outside its looks (budget, no case)

    @property
    def decided(self) -> bool:
        return self.stopped is not None or bool(self.looks and self.looks[-1].stopped)

    @property
    def decision(self) -> str:
        """The gate's verdict vocabulary: the deciding look's, "no data" for a skill with no
        positive case, "does not reach threshold" for one a budget stopped undecided."""
        if self.looks and self.looks[-1].stopped:
            return self.looks[-1].decision
        if self.stopped:
            return "no data" if self.design is None else "does not reach threshold"
        return "continue"

    @property
    def passed(self) -> bool:
        return bool(self.looks and self.looks[-1].passed)

    def reason(self) -> str:
        if self.stopped:
            return self.stopped
        return self.looks[-1].reason if self.looks else "not analysed"


class Ledger(VersionedRecord):
    """``sequential.json``: the study's sequential designs and decisions."""

    model_config = ConfigDict(frozen=True, ser_json_inf_nan="constants")
    SCHEMA_ARTIFACT: ClassVar[str] = "sequential ledger"
    SCHEMA_VERSION: ClassVar[str] = "2"  # 2: case rounds (looks read the gate's e-value; no spending)
    SCHEMA_REGENERATE: ClassVar[str] = "delete sequential.json and sequential/ and re-run the study"

    job: str
    seed: int
    n_attempts: int
    rounds_done: int = 0
    trials_run: int = 0
    trials_reused: int = 0
    trials_fixed: int = 0  # what the fixed design would run (every case, every attempt, every arm)
    stop_note: str | None = None
    skills: dict[str, SkillPlan]

    def lines(self) -> list[str]:
        out = []
        for name, sp in sorted(self.skills.items()):
            looks = len(sp.design.looks()) if sp.design else 0
            where = f"look {len(sp.looks)} of {looks}" if sp.design else "no look"
            out.append(f"  {name}: {DECISION_TEXT.get(sp.decision, sp.decision)} ({where}): {sp.reason()}")
        return out
