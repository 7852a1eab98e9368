"""``aces-bench dataset refine <skill-dir> --from-results <dir>``: learn from passing trials.

From a results dir (``grades.jsonl``, else ``trials.parquet``; trajectories at
``<trial_dir>/agent/trajectory.json``), for each case of the skill:
- the tool-call steps every passing with-skill trial shares become the proposed
  ``expected_behavior``, after EVAL.md's directives (which always stay first);
- the final answer enough passing trials agree on becomes the proposed ``expected_output``.
Proposals are written only where no author value exists (the field is empty, the case
is generated, or an earlier refine proposed it; ``proposed`` records which). Cases from
``eval.config`` and EVAL.md's expected answers are the author's and are only reported.

An agent's answer becomes ``expected_output`` only when its trials passed a verifier
that checked something (the case has deterministic checks): a reward of 1.0 for want
of any check is no evidence the answer is right. Only steps that touch a skill
(reading its SKILL.md, running its scripts, activating it) become behaviours; a
generic ``sed`` or ``ls`` is how one agent worked, not what the skill requires.
The result is shown as a unified diff of the evals file to review; ``--apply``
writes it.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from aces_bench.datasets.evalmd import EVAL_MD, EvalIntent, find_eval_md, intent_cases, read_intent
from aces_bench.datasets.formats import read_assets, render_suite
from aces_bench.datasets.lift import (
    aligned_answer,
    common_steps,
    normalise_answer,
    trial_steps,
)
from aces_bench.datasets.model import EvalCase, EvalSuite
from aces_bench.errors import EvalsError, validation_lines
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.tool_calls import build_view
from aces_bench.io import write_text
from aces_bench.skills import load_skill
from aces_bench.trialfiles import read_trial_file

GRADES_FILE = "grades.jsonl"
TABLE_FILE = "trials.parquet"
ANSWER_COPY = Path("artifacts/workspace/answer.txt")


@dataclass(frozen=True)
class TrialOutcome:
    """What refine needs of one trial, from either results format."""

    case_id: str
    condition: str
    status: str
    reward: float | None
    trial_dir: Path | None
    final_answer: str | None


@dataclass
class CaseEvidence:
    passing: list[TrialOutcome] = field(default_factory=list)
    steps: list[list[str]] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


@dataclass
class RefineReport:
    path: Path
    written: bool = False
    changes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    suite: EvalSuite | None = None
    diff: str = ""

    def render(self) -> str:
        state = "wrote" if self.written else ("proposed (not written; review the diff, then --apply)"
                                              if self.changes else "unchanged")
        lines = [f"{state}: {self.path}"]
        lines += [f"changed {c}" for c in self.changes] or ["no proposal"]
        lines += [f"kept {s}" for s in self.skipped]
        if self.diff:
            lines += ["", self.diff.rstrip("\n")]
        return "\n".join(lines)


def _resolve_trial_dir(raw: str | None, trial_name: str | None, results_dir: Path) -> Path | None:
    candidates = []
    if raw:
        candidates += [Path(raw), results_dir / raw]
    if trial_name:
        candidates += sorted(results_dir.glob(f"jobs/*/{trial_name}"))
    return next((c for c in candidates if c.is_dir()), None)


def read_outcomes(results_dir: Path, skill_name: str) -> list[TrialOutcome]:
    """The trials of one skill in a results dir; grades.jsonl preferred, trials.parquet otherwise."""
    results_dir = Path(results_dir)
    grades = results_dir / GRADES_FILE
    rows: list[dict] = []
    if grades.is_file():
        from aces_bench.records import GradedTrial

        for n, line in enumerate(grades.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append(GradedTrial.model_validate_json(line).model_dump())
            except ValidationError as err:
                raise EvalsError(
                    f"line {n} is not a graded trial: " + "; ".join(validation_lines(err)[:3]),
                    where=grades,
                    fix="point --from-results at a study output dir written by this aces-bench version",
                ) from None
    elif (results_dir / TABLE_FILE).is_file():
        import pandas as pd

        rows = pd.read_parquet(results_dir / TABLE_FILE).to_dict("records")
    else:
        raise EvalsError(
            f"no {GRADES_FILE} or {TABLE_FILE} in the results dir",
            where=results_dir,
            fix="point --from-results at a study output dir (it holds grades.jsonl and trials.parquet)",
        )
    out = []
    for r in rows:
        if r.get("skill") != skill_name:
            continue
        trial_dir = _resolve_trial_dir(r.get("trial_dir"), r.get("trial_name"), results_dir)
        answer = r.get("final_answer")
        if answer is None and trial_dir is not None:
            read = read_trial_file(trial_dir / ANSWER_COPY, limit=1024 * 1024)  # the trial wrote it
            answer = read.text() if read.ok else None
        reward = r.get("reward")
        out.append(TrialOutcome(
            case_id=str(r["case_id"]), condition=str(r["condition"]), status=str(r["status"]),
            reward=None if reward is None or math.isnan(reward) else float(reward),
            trial_dir=trial_dir, final_answer=answer,
        ))
    return out


def gather(outcomes: list[TrialOutcome], pass_threshold: float) -> dict[str, CaseEvidence]:
    """Passing with-skill trials per case, with their tool-call steps."""
    by_case: dict[str, CaseEvidence] = {}
    for o in outcomes:
        if o.condition != "with_skill" or o.status != "ok" or o.reward is None or o.reward < pass_threshold:
            continue
        ev = by_case.setdefault(o.case_id, CaseEvidence())
        ev.passing.append(o)
        loaded = load_trial_trajectory(o.trial_dir) if o.trial_dir else None
        if loaded is None or loaded.trajectory is None:
            ev.unreadable.append(loaded.error if loaded else "trial dir not found")
            continue
        ev.steps.append(trial_steps(build_view(loaded.trajectory)))
    return by_case


def _directives(case: EvalCase, intent: EvalIntent, intent_by_id: dict[str, EvalCase]) -> list[str]:
    if case.source == "eval_md" and case.id in intent_by_id:
        return list(intent_by_id[case.id].expected_behavior)
    return [] if case.is_negative_control else intent.directives


def _about_a_skill(step: str) -> bool:
    """A lifted step that names a skill (its SKILL.md, its scripts, its activation)."""
    return "SKILL.md" in step or "/scripts/" in step or step.startswith("activates the ")


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= limit else one[: limit - 3] + "...")


def _may_write(case: EvalCase, name: str) -> bool:
    if case.is_generated or name in case.proposed:
        return True
    if name == "expected_behavior":
        return case.source == "eval_md" or not case.expected_behavior
    return case.expected_output is None


def propose(
    case: EvalCase, ev: CaseEvidence | None, intent: EvalIntent, intent_by_id: dict[str, EvalCase],
    min_agree: int, report: RefineReport,
) -> EvalCase:
    """The case with the proposals it may take; every decision is added to ``report``."""
    if ev is None or not ev.passing:
        report.skipped.append(f"{case.id}: no passing with-skill trial")
        return case
    update: dict = {}
    proposed = list(case.proposed)
    if ev.steps:
        lifted = [step for step in common_steps(ev.steps) if _about_a_skill(step)]
        directives = _directives(case, intent, intent_by_id)
        behavior = directives + [s for s in lifted if s not in directives]
        if not _may_write(case, "expected_behavior"):
            report.skipped.append(f"{case.id}.expected_behavior: author-written (observed: {'; '.join(lifted)})")
        elif behavior != case.expected_behavior and lifted:
            update["expected_behavior"] = behavior
            report.changes.append(
                f"{case.id}.expected_behavior: {len(lifted)} step(s) common to {len(ev.steps)} passing trial(s), "
                f"after {len(directives)} EVAL.md directive(s)"
            )
            proposed.append("expected_behavior")
    if ev.unreadable:
        report.skipped.append(f"{case.id}: {len(ev.unreadable)} passing trial(s) without a readable trajectory")
    answer, why = aligned_answer([o.final_answer or "" for o in ev.passing], min_agree)
    if answer is None:
        report.skipped.append(f"{case.id}.expected_output: not proposed ({why})")
    elif not _may_write(case, "expected_output"):
        same = normalise_answer(case.expected_output or "") == normalise_answer(answer)
        seen = "the trials agree with it" if same else f"{why} on {_short(answer)}"
        report.skipped.append(f"{case.id}.expected_output: author-written ({seen})")
    elif not case.checks:
        report.skipped.append(
            f"{case.id}.expected_output: not proposed (the case has no deterministic check, so a passing "
            "reward says nothing about the answer; add a check or write the expected output yourself)")
    elif answer != case.expected_output:
        update["expected_output"] = answer
        report.changes.append(f"{case.id}.expected_output: {why}")
        proposed.append("expected_output")
    if not update:
        return case
    return case.model_copy(update={**update, "proposed": sorted(set(proposed))})


def refine_dataset(
    skill_dir: Path, results_dir: Path, *, pass_threshold: float = 1.0, min_agree: int = 2, dry_run: bool = False
) -> RefineReport:
    """Propose ``expected_behavior`` and ``expected_output`` from a results dir; write where allowed."""
    skill_dir = Path(skill_dir)
    skill = load_skill(skill_dir)
    assets = read_assets(skill_dir, skill.name)
    if assets.evals_suite is None:
        raise EvalsError(
            "no evals file to refine (refine writes only to evals/evals.json, .jsonl or .yaml)",
            where=skill_dir,
            fix="run 'aces-bench dataset create <skill-dir>' first",
        )
    intent = read_intent(skill_dir)
    intent_by_id = {c.id: c for c in intent_cases(intent, skill.name, find_eval_md(skill_dir) or skill_dir / EVAL_MD)}
    evidence = gather(read_outcomes(Path(results_dir), skill.name), pass_threshold)
    report = RefineReport(path=assets.evals_path)  # type: ignore[arg-type]
    cases = [propose(c, evidence.get(c.id), intent, intent_by_id, min_agree, report) for c in assets.evals_cases]
    for c in assets.config_cases:
        report.skipped.append(f"{c.id}: from eval.config (the author's file, not rewritten)")
    unknown = sorted(set(evidence) - {c.id for c in assets.evals_cases + assets.config_cases})
    if unknown:
        report.skipped.append(f"results for case ids the skill no longer has: {', '.join(unknown)}")
    suite = assets.evals_suite.model_copy(update={"evals": cases})
    report.suite = suite
    text = render_suite(suite, assets.evals_path.suffix)  # type: ignore[union-attr]
    current = assets.evals_path.read_text(encoding="utf-8")  # type: ignore[union-attr]
    name = assets.evals_path.relative_to(skill_dir).as_posix()  # type: ignore[union-attr]
    report.diff = "".join(difflib.unified_diff(current.splitlines(keepends=True), text.splitlines(keepends=True),
                                               fromfile=f"a/{name}", tofile=f"b/{name}"))
    if report.changes and not dry_run:
        write_text(assets.evals_path, text)  # type: ignore[arg-type]
        report.written = True
    return report

