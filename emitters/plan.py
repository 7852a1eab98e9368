"""From a run spec to the list of paired tasks to emit.

One ``TaskPlan`` per (target skill, case, condition) for the spec's workspace mode
and decoy set. The with-skill and baseline plans of a case differ only in whether the
target skill is staged; everything else (support and decoy skills, fixtures,
instruction, verifier) is identical, which is what makes the pair a paired sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from aces_bench.cases import EvalCase, load_suite
from aces_bench.config.spec import RunSpec
from aces_bench.errors import SkillError
from aces_bench.skills import Skill, discover_skill_dirs, load_skill

Condition = Literal["with_skill", "baseline"]
Role = Literal["target", "support", "decoy"]


class StagedSkill(BaseModel):
    model_config = ConfigDict(frozen=True)

    skill: Skill
    role: Role


class TaskPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    target: Skill
    case: EvalCase
    condition: Condition
    workspace_mode: Literal["isolation", "group"]
    decoy_set: str
    staged: tuple[StagedSkill, ...]

    @property
    def staged_names(self) -> tuple[str, ...]:
        return tuple(s.skill.name for s in self.staged)

    @property
    def allowed_skills(self) -> tuple[str, ...]:
        """Skills the agent may read without a routing penalty."""
        allowed = [s.skill.name for s in self.staged if s.role in ("target", "support")]
        allowed += [a for a in self.case.acceptable_skills if a not in allowed]
        return tuple(allowed)


class StudyPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    targets: tuple[Skill, ...]
    support: tuple[Skill, ...]
    decoys: tuple[Skill, ...]
    tasks: tuple[TaskPlan, ...]


def _load_all(paths: list[Path]) -> list[Skill]:
    skills: dict[str, Skill] = {}
    for path in paths:
        for skill_dir in discover_skill_dirs(path):
            skill = load_skill(skill_dir)
            if skill.name in skills and skills[skill.name].path != skill.path:
                raise SkillError(
                    f"two skills are named {skill.name!r} ({skills[skill.name].path} and {skill.path})",
                    where=skill.path / "SKILL.md",
                    fix="give each skill a unique 'name' in its frontmatter",
                )
            skills[skill.name] = skill
    return [skills[n] for n in sorted(skills)]


def select_decoys(pool: list[Skill], size: int | None) -> list[Skill]:
    """The first ``size`` decoys by name (all when size is None): deterministic."""
    if size is None:
        return pool
    if size > len(pool):
        raise SkillError(
            f"decoys.size={size} but the decoy pool holds only {len(pool)} skills",
            where="decoys.paths",
            fix=f"lower decoys.size to at most {len(pool)} or add decoy folders to decoys.paths",
        )
    return pool[:size]


def plan_study(spec: RunSpec) -> StudyPlan:
    """Load every skill and case the spec names and lay out the paired tasks."""
    targets = _load_all(spec.skill.paths)
    support = _load_all(spec.skill.support)
    target_names = {t.name for t in targets}
    support = [s for s in support if s.name not in target_names]
    support_names = {s.name for s in support}
    decoys: list[Skill] = []
    if spec.workspace.mode == "group":
        pool = [d for d in _load_all(spec.decoys.paths) if d.name not in target_names | support_names]
        decoys = select_decoys(pool, spec.decoys.size)

    tasks: list[TaskPlan] = []
    for target in targets:
        suite = load_suite(target.path, target.name)
        cases = [c for c in suite.evals if not spec.skill.cases or c.id in spec.skill.cases]
        for case in cases:
            for condition in ("with_skill", "baseline"):
                staged = [StagedSkill(skill=s, role="support") for s in support]
                staged += [StagedSkill(skill=d, role="decoy") for d in decoys]
                if condition == "with_skill":
                    staged.append(StagedSkill(skill=target, role="target"))
                staged.sort(key=lambda s: s.skill.name)
                tasks.append(
                    TaskPlan(
                        target=target,
                        case=case,
                        condition=condition,
                        workspace_mode=spec.workspace.mode,
                        decoy_set=spec.decoys.name if spec.workspace.mode == "group" else "none",
                        staged=tuple(staged),
                    )
                )
    if spec.skill.cases:
        known = {t.case.id for t in tasks}
        unknown = sorted(set(spec.skill.cases) - known)
        if unknown:
            raise SkillError(
                f"skill.cases names case ids no target skill has: {', '.join(unknown)}",
                where="skill.cases",
                fix="use ids from the skills' evals/evals.json, or leave skill.cases empty",
            )
    return StudyPlan(targets=tuple(targets), support=tuple(support), decoys=tuple(decoys), tasks=tuple(tasks))
