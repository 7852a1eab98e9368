"""What a grader may read about one trial, whatever produced it: ``TrialSubject``.

Built by ``grade.StudyGrader.subject`` for a study's trials and by ``external`` for any
Harbor job dir; ``grade.grade_subject`` turns it into the record it writes
(``aces_bench.records.trials.GradedTrial``). It lives with grading, not with the records,
because it holds what only grading reads (the case, Harbor's result, the folders to read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aces_bench.records.trials import TrialFacts

if TYPE_CHECKING:
    from harbor.models.trial.result import TrialResult

    from aces_bench.cases import EvalCase


@dataclass(frozen=True)
class TrialSubject:
    """One trial's facts and everything a grader may read, whatever produced the trial."""

    facts: TrialFacts
    case: EvalCase | None
    result: TrialResult | None
    target_skill: str
    allowed_skills: tuple[str, ...]
    skills_dir: str  # workspace.skills_dir of the study, or what a foreign trial's task names
    workdir: str  # workspace.workdir, likewise
    staged_skills: tuple[str, ...] = ()
    answer_file: str = "answer.txt"
    artifacts_dir: Path | None = None
    skill_dir: Path | None = None  # the target skill's folder: where its author graders live
    labels: dict[str, str | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    routing_known: bool = True  # False: nothing says which skills the agent may read
    verifier_checks: bool = True  # False: the verifier checks nothing, so its reward means nothing

    @property
    def trial_dir(self) -> Path | None:
        return Path(self.facts.trial_dir) if self.facts.trial_dir else None

    @classmethod
    def of(cls, **fields: Any) -> TrialSubject:
        """A subject from flat keywords: the ``TrialFacts`` ones become ``facts``.

        Facts a caller rarely knows default as a plain single-skill trial: no case kind,
        not a negative control, isolation, no decoys, no visible skills counted.
        """
        names = set(TrialFacts.model_fields)
        facts = {"case_kind": None, "negative_control": False, "workspace_mode": "isolation", "decoy_set": "none",
                 "n_visible_skills": 0, **{k: v for k, v in fields.items() if k in names}}
        if facts.get("trial_dir") is not None:
            facts["trial_dir"] = str(facts["trial_dir"])
        return cls(facts=TrialFacts(**facts), **{k: v for k, v in fields.items() if k not in names})
