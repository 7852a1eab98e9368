"""From a run spec to the list of paired tasks to emit.

One ``TaskPlan`` per (intervention case, condition) for the spec's workspace mode and
decoy set. The with-skill and baseline plans of a case differ only in whether the
intervention (one skill, a bundle or a plugin's skills) is staged; everything else
(prerequisite/helper/reference/decoy skills, fixtures, instruction, environment,
verifier) is identical, which is what makes the pair a paired sample. The calibration
arms of ``study.controls`` (``aces_bench/core/conditions.py``) are more conditions of the
same case: ``null`` stages what the baseline stages, ``placebo`` a sham of each member
(``emitters/placebo.py``) where the member would be, ``forced`` what with_skill stages
(its instruction differs: ``harbor_task.instruction_text``).
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from aces_bench.agents.profiles import profile_named
from aces_bench.cases import SAFE_CASE_ID, EvalCase, load_suite
from aces_bench.cases.formats import has_eval_assets, select_evals_files
from aces_bench.config.spec import RunSpec
from aces_bench.core.conditions import PAIRED, Condition
from aces_bench.core.errors import SkillError
from aces_bench.emitters.interventions import Intervention, load_interventions, load_skills, loaded
from aces_bench.emitters.native import find_native_tasks, native_case
from aces_bench.emitters.placebo import placebo_files, placebo_skill
from aces_bench.inputs.skills import Skill

log = logging.getLogger("aces_bench.plan")

Role = Literal["target", "placebo", "prerequisite", "helper", "reference", "decoy"]
# Roles the agent may read without a routing penalty: everything staged on purpose
# to help (a placebo stands where the target would). Decoys are there to be ignored.
ALLOWED_ROLES: tuple[str, ...] = ("target", "placebo", "prerequisite", "helper", "reference")


class StagedSkill(BaseModel):
    model_config = ConfigDict(frozen=True)

    skill: Skill
    role: Role
    files: tuple[tuple[str, bytes], ...] | None = None
    """Generated files staged instead of the skill folder's (the placebo's sham)."""


PLUGINS_DIR = "/plugins"
"""Where a whole plugin is staged in the sandbox (``agents.installed.PLUGINS_DIR`` loads it from there)."""


def plugin_parts_read(spec: RunSpec) -> tuple[str, ...]:
    """The plugin parts the configured harness reads (its profile's ``plugin_parts``; a harness
    no profile describes reads a plugin's skills only, from the skills dir)."""
    profile = profile_named(spec.harness.agent or spec.harness.name)
    return profile.plugin_parts if profile is not None else ("skills",)


class StagedPlugin(BaseModel):
    """A whole plugin folder staged at ``/plugins/<name>/`` beside its members' skills."""

    model_config = ConfigDict(frozen=True)

    name: str
    files: tuple[tuple[str, bytes], ...]
    parts: tuple[str, ...]
    read_by_harness: tuple[str, ...]

    @property
    def not_read(self) -> tuple[str, ...]:
        return tuple(p for p in self.parts if p not in self.read_by_harness)


class TaskPlan(BaseModel):
    """One task to emit. ``target`` is the skill whose case this is (for a bundle or a
    plugin, the member that owns the case); ``intervention`` is what the lift is
    attributed to (the target's own name for a single skill)."""

    model_config = ConfigDict(frozen=True)

    target: Skill
    case: EvalCase
    condition: Condition
    workspace_mode: Literal["isolation", "group"]
    decoy_set: str
    staged: tuple[StagedSkill, ...]
    intervention: str = ""
    intervention_kind: Literal["skill", "bundle", "plugin"] = "skill"
    intervention_members: tuple[str, ...] = ()
    native_task: Path | None = None
    """A bring-your-own Harbor task dir (``evals/harbor/<task>``) this plan pairs."""
    decoy_seed: int | None = None
    decoy_size: int | None = None
    plugins: tuple[StagedPlugin, ...] = ()
    """Whole plugin folders staged (a plugin intervention's with_skill and forced arms)."""

    @property
    def intervention_name(self) -> str:
        return self.intervention or self.target.name

    @property
    def staged_names(self) -> tuple[str, ...]:
        return tuple(s.skill.name for s in self.staged)

    @property
    def allowed_skills(self) -> tuple[str, ...]:
        """Skills the agent may read without a routing penalty."""
        allowed = [s.skill.name for s in self.staged if s.role in ALLOWED_ROLES]
        allowed += [a for a in self.case.acceptable_skills if a not in allowed]
        # A case meant for another visible skill (a decoy, in a group-mode routing study) may read it.
        if self.case.expected_skill in self.staged_names and self.case.expected_skill not in allowed:
            allowed.append(self.case.expected_skill)
        return tuple(allowed)


class StudyPlan(BaseModel):
    model_config = ConfigDict(frozen=True)

    targets: tuple[Skill, ...]
    support: tuple[Skill, ...]
    decoys: tuple[Skill, ...]
    tasks: tuple[TaskPlan, ...]
    interventions: tuple[Intervention, ...] = ()
    support_roles: dict[str, str] = {}
    decoy_pool: tuple[str, ...] = ()
    """Names of every skill the decoys were drawn from (empty in isolation mode)."""
    notes: tuple[str, ...] = ()
    """What the user should know about the plan (plugin parts the harness cannot read)."""


def select_decoys(pool: list[Skill], size: int | None, seed: int = 0) -> list[Skill]:
    """``size`` decoys drawn from ``pool`` with ``seed`` (all when size is None), by name.

    The draw is a seeded shuffle of the pool sorted by name, cut at ``size``: the same
    seed gives the same set on every machine, and the sets of one seed are nested
    (size 5 holds the size-1 decoy), so a sweep over sizes varies only the count.
    """
    ordered = sorted(pool, key=lambda s: s.name)
    if size is None:
        return ordered
    if size > len(ordered):
        raise SkillError(
            f"decoys.size={size} but the decoy pool holds only {len(ordered)} skills",
            where="decoys.paths",
            fix=f"lower decoys.size to at most {len(ordered)} or add decoy folders to decoys.paths",
        )
    shuffled = list(ordered)
    random.Random(seed).shuffle(shuffled)
    return sorted(shuffled[:size], key=lambda s: s.name)


def draw_decoys(spec: RunSpec, exclude: set[str]) -> tuple[list[Skill], list[Skill]]:
    """(the decoy pool, the decoys drawn from it) for the spec's group workspace; both
    empty in isolation mode. Skills named in ``exclude`` (the targets, their support)
    are never decoys."""
    if spec.workspace.mode != "group" or not spec.decoys.paths:
        return [], []
    pool = [d for d in load_skills(spec.decoys.paths) if d.name not in exclude]
    return pool, select_decoys(pool, spec.decoys.size, spec.decoys.seed)


def decoy_set_name(spec: RunSpec) -> str:
    """The decoy-set label of the spec's tasks: the option name, with size and seed
    when drawn, so sweep members over sizes never share a pairing key."""
    if spec.workspace.mode != "group":
        return "none"
    d = spec.decoys
    return d.name if d.size is None else f"{d.name}-n{d.size}-s{d.seed}"


def _has_evals(skill: Skill) -> bool:
    return has_eval_assets(skill.path)


def _cases(member: Skill, spec: RunSpec) -> list[tuple[EvalCase, Path | None]]:
    """The member's generated cases, then its native Harbor tasks (as cases)."""
    native = find_native_tasks(member) if spec.skill.harbor_tasks else []
    out: list[tuple[EvalCase, Path | None]] = []
    if _has_evals(member) or not native:
        chosen = spec.skill.evals_file
        cases = list(loaded(f"suite:{member.name}:{chosen or ''}", member.path,
                            lambda: load_suite(member.path, member.name, chosen)).evals)
        for path, why in select_evals_files(member.path, chosen).unread:
            log.info("%s: %s %s", member.name, path.relative_to(member.path).as_posix(), why)
        if spec.skill.cases:
            cases = [c for c in cases if c.id in spec.skill.cases or f"{member.name}.{c.id}" in spec.skill.cases]
        drafts = [c.id for c in cases if c.status == "draft"]
        if drafts and not spec.skill.accept_drafts:
            raise SkillError(
                f"{len(drafts)} case(s) are drafts nobody has reviewed yet: {', '.join(drafts)}",
                where=member.path,
                fix="review them in evals/ and delete their 'status: draft' line, or run with skill.accept_drafts=true",
            )
        out += [(c, None) for c in cases]
    out += [(native_case(d, member), d) for d in native]
    return out


def _qualified(case: EvalCase, member: Skill) -> EvalCase:
    """A bundle member's case under ``<member>.<id>``: members' ids often repeat
    (explicit-1, ...) and the pairing key needs them unique within the intervention."""
    qualified = f"{member.name}.{case.id}"
    if not SAFE_CASE_ID.match(qualified):
        raise SkillError(
            f"case id {qualified!r} (skill name + case id) is longer than 64 characters",
            where=member.path,
            fix="shorten the skill's name or the case id",
        )
    return case.model_copy(update={"id": qualified})


def _support(spec: RunSpec, exclude: set[str]) -> tuple[list[Skill], dict[str, str]]:
    skills: list[Skill] = []
    roles: dict[str, str] = {}
    for entry in spec.skill.support:
        for skill in load_skills([entry.path]):
            if skill.name in exclude:
                continue
            if skill.name in roles and roles[skill.name] != entry.role:
                raise SkillError(
                    f"support skill {skill.name!r} is given two roles ({roles[skill.name]} and {entry.role})",
                    where="skill.support",
                    fix="list each support skill once, with one role",
                )
            if skill.name not in roles:
                skills.append(skill)
                roles[skill.name] = entry.role
    return sorted(skills, key=lambda s: s.name), roles


def plan_study(spec: RunSpec) -> StudyPlan:
    """Load every skill and case the spec names and lay out the paired tasks."""
    interventions = load_interventions(spec)
    targets = sorted({m.name: m for i in interventions for m in i.members}.values(), key=lambda s: s.name)
    target_names = {t.name for t in targets}
    support, roles = _support(spec, target_names)
    pool, decoys = draw_decoys(spec, exclude=target_names | set(roles))
    drawn = spec.workspace.mode == "group" and spec.decoys.size is not None
    decoy_set = decoy_set_name(spec)

    shared = [StagedSkill(skill=s, role=roles[s.name]) for s in support]  # type: ignore[arg-type]
    shared += [StagedSkill(skill=d, role="decoy") for d in decoys]
    tasks: list[TaskPlan] = []
    notes: list[str] = []
    short = _short_ids(interventions, spec)
    for iv in interventions:
        members_staged = [StagedSkill(skill=m, role="target") for m in iv.members]
        plugin = () if iv.plugin is None else (StagedPlugin(
            name=iv.name, files=iv.plugin.files, parts=iv.plugin.parts, read_by_harness=plugin_parts_read(spec)),)
        if plugin and plugin[0].not_read:
            notes.append(f"plugin {iv.name}: harness {spec.harness.name} reads only its "
                         f"{', '.join(plugin[0].read_by_harness)}; not staged for it: {', '.join(plugin[0].not_read)} "
                         f"(harness=claude-code loads the whole plugin)")
        # A bundle's or plugin's placebo is a sham of every member, each where the member would be.
        shams = [StagedSkill(skill=placebo_skill(m), role="placebo", files=placebo_files(m)) for m in iv.members]
        staged_by = {"with_skill": members_staged, "forced": members_staged, "placebo": shams}
        seen: dict[str, str] = {}
        for member in iv.members:
            for case, native in _cases(member, spec):
                if len(iv.members) > 1:
                    case = _qualified(case, member)
                if spec.skill.cases and case.id not in spec.skill.cases and case.id not in short:
                    continue
                if case.id in seen:
                    raise SkillError(
                        f"case id {case.id!r} is used by both {seen[case.id]!r} and {member.name!r} "
                        f"in intervention {iv.name!r}",
                        where=member.path,
                        fix="give the cases of a bundle's skills distinct ids",
                    )
                seen[case.id] = member.name
                for condition in (*PAIRED, *spec.study.controls):
                    staged = list(shared) + staged_by.get(condition, [])
                    staged.sort(key=lambda s: s.skill.name)
                    tasks.append(
                        TaskPlan(
                            target=member,
                            case=case,
                            condition=condition,
                            workspace_mode=spec.workspace.mode,
                            decoy_set=decoy_set,
                            staged=tuple(staged),
                            intervention=iv.name,
                            intervention_kind=iv.kind,
                            intervention_members=tuple(m.name for m in iv.members),
                            native_task=native,
                            decoy_seed=spec.decoys.seed if drawn else None,
                            decoy_size=spec.decoys.size if drawn else None,
                            plugins=plugin if condition in ("with_skill", "forced") else (),
                        )
                    )
    if spec.skill.cases:
        known = {t.case.id for t in tasks} | set(short.values())
        unknown = sorted(set(spec.skill.cases) - known)
        if unknown:
            raise SkillError(
                f"skill.cases names case ids no target skill has: {', '.join(unknown)}",
                where="skill.cases",
                fix="use one of: " + ", ".join(sorted(_all_case_ids(interventions, spec))) + " (a bundle's or "
                    "plugin's cases as <member>.<id>, or <id> alone where one member has it)",
            )
    return StudyPlan(
        targets=tuple(targets),
        support=tuple(support),
        decoys=tuple(decoys),
        tasks=tuple(tasks),
        interventions=tuple(interventions),
        support_roles=roles,
        decoy_pool=tuple(sorted(p.name for p in pool)),
        notes=tuple(notes),
    )


def _all_case_ids(interventions: list[Intervention], spec: RunSpec) -> list[str]:
    """Every case id a study of these interventions can run, qualified for bundles and plugins."""
    out = []
    for iv in interventions:
        for member in iv.members:
            suite = [c for c, _ in _cases(member, spec.model_copy(update={"skill": spec.skill.model_copy(
                update={"cases": []})}))]
            out += [f"{member.name}.{c.id}" if len(iv.members) > 1 else c.id for c in suite]
    return out


def _short_ids(interventions: list[Intervention], spec: RunSpec) -> dict[str, str]:
    """The qualified id (``row-count.rows-1``) of each ``skill.cases`` entry given short (``rows-1``) -> that short
    id; a short id several members have is an error naming them."""
    if not spec.skill.cases or all(len(iv.members) < 2 for iv in interventions):
        return {}
    qualified = [i for i in _all_case_ids(interventions, spec) if "." in i]
    out: dict[str, str] = {}
    for given in spec.skill.cases:
        if given in qualified:
            continue
        hits = [q for q in qualified if q.split(".", 1)[1] == given]
        if len(hits) > 1:
            raise SkillError(f"skill.cases: {given!r} is a case of several members: {', '.join(hits)}",
                             where="skill.cases", fix=f"name one of them in full, e.g. {hits[0]}")
        if hits:
            out[hits[0]] = given
    return out
