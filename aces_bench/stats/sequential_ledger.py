"""``sequential.json``: a sequential study's designs, case orders and looks, as stored.

Written by ``aces_bench.study.sequential`` after every round, read back on resume and
by the report (``reports/sequential.py``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from aces_bench.core.gate import DECISION_TEXT
from aces_bench.core.versioning import VersionedRecord
from aces_bench.stats.sequential import LookRecord, SequentialDesign

LEDGER = "sequential.json"


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
