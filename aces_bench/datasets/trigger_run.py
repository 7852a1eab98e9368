"""Trigger trials: the configured harness run through Harbor until it activates a skill or answers.

Each ``{query, should_trigger}`` query becomes one Harbor task whose instruction is the
query (with the usual footer), staged with the target alone (isolation) or with the
target and the configured decoys (group, ``decoys=...``), run ``runs`` times
(``study.n_attempts``) by the harness the config names, exactly as a study runs it
(reference agent on the offline default; ``harness=terminus-2 model=...``,
``harness=claude-code`` ... a config away). The trial is cut short: the reference agent
stops at its activation (``trigger_only``), terminus-2 and claude-code get a short
``max_turns``, and every harness gets ``workspace.agent_timeout_sec``.

What fired is read from each trial's trajectory with the graders' own activation rule
(``graders.skill_execution.activations``: a SKILL.md read or a harness activation call),
the first activation deciding. A trial that failed or timed out before activating
anything is counted as failed (``QueryResult.failed``), never as "did not trigger".
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import yaml

from aces_bench.agents.profiles import profile_turn_limit
from aces_bench.cases.model import EvalCase
from aces_bench.config.compose import compose_spec
from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import EvalsError
from aces_bench.core.io import load_yaml, write_json
from aces_bench.datasets.trigger import (
    NONE,
    ModeResult,
    QueryResult,
    Router,
    TriggerQuery,
    TriggerReport,
    load_queries,
    optimise,
    router_evaluator,
)
from aces_bench.emitters import emit_study
from aces_bench.emitters.plan import StagedSkill, StudyPlan, TaskPlan, decoy_set_name, draw_decoys
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.skill_execution import activations, norm_skill
from aces_bench.graders.tool_calls import build_view
from aces_bench.inputs.skills import Skill, evaluation_asset, load_skill
from aces_bench.inputs.skilltree import copy_tree
from aces_bench.judges.base import Judge
from aces_bench.judges.options import litellm_judge
from aces_bench.records.study import KINDS
from aces_bench.run.collect import TrialRecord, collect_job
from aces_bench.run.runner import run_job
from aces_bench.study.outlock import study_lock, usable_output_dir
from aces_bench.study.preflight import preflight_trials
from aces_bench.study.provenance import build_provenance, planned_skills

REFERENCE = "aces_bench.agents.reference:ReferenceAgent"
DEFAULT_DECOYS = "decoys=paper"


def _turn_limit(spec: RunSpec) -> str | None:
    """The kwarg capping the harness's turns (``HarnessProfile.turn_limit``; the others stop by the timeout only).

    The profile is the harness's own (``harness.name``), else the Harbor agent's or the CLI's
    it runs (``harness=harbor harness.agent=terminus-2``)."""
    h = spec.harness
    return profile_turn_limit(h.name, h.agent, h.cli)


def quoted(path: Path) -> str:
    """A path as a quoted Hydra override value (paths may hold ',', '=' or spaces)."""
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _given(overrides: list[str], key: str) -> bool:
    return any(o.lstrip("+~").split("=", 1)[0] == key for o in overrides)


def trigger_spec(overrides: list[str], target: Path, mode: str, *, runs: int, out: Path,
                 timeout_sec: float, max_turns: int) -> RunSpec:
    """The study spec of one mode's trigger trials: the user's overrides, the target,
    ``runs`` attempts, a short agent timeout and turn limit (unless the user set them)."""
    extra = ["skill=custom", f"skill.paths=[{quoted(Path(target).resolve())}]", f"workspace.mode={mode}",
             f"study.n_attempts={runs}", "study.stop_on_pass=false", "report=false"]
    if not _given(overrides, "decoys"):
        extra.append(DEFAULT_DECOYS)
    if not _given(overrides, "workspace.agent_timeout_sec"):
        extra.append(f"workspace.agent_timeout_sec={timeout_sec}")
    if not _given(overrides, "study.name"):
        extra.append("study.name=trigger")
    spec = compose_spec([*overrides, *extra], output_dir=out)
    kwargs = dict(spec.harness.kwargs)
    if spec.harness.import_path == REFERENCE:
        kwargs.setdefault("trigger_only", True)
    elif _turn_limit(spec) is not None:
        kwargs.setdefault(_turn_limit(spec), max_turns)
    return spec.model_copy(update={"harness": spec.harness.model_copy(update={"kwargs": kwargs})})


def stop_rule(spec: RunSpec) -> str:
    """How this harness's trigger trial is cut short, for the report."""
    h = spec.harness
    timeout = f"agent timeout {spec.workspace.agent_timeout_sec:g} s"
    if h.import_path == REFERENCE and h.kwargs.get("trigger_only"):
        return f"stops at its first activation (trigger_only); {timeout}"
    limit = _turn_limit(spec)
    if limit is not None:
        return f"{limit}={h.kwargs.get(limit)}; {timeout}"
    return f"{timeout} (this harness has no turn limit)"


def harness_label(spec: RunSpec) -> str:
    model = f", model {spec.model.display}" if spec.harness.requires_model else ""
    return f"{spec.harness.display} through Harbor (backend {spec.backend.name}{model})"


def _cases(target: Skill, queries: list[TriggerQuery]) -> list[EvalCase]:
    return [EvalCase(id=f"q{i:02d}", prompt=q.query, note="trigger query",
                     expected_skill=q.expected_skill if "expected_skill" in q.model_fields_set else
                     (target.name if q.should_trigger else None))
            for i, q in enumerate(queries, start=1)]


def trigger_plan(spec: RunSpec, target: Skill, queries: list[TriggerQuery]) -> StudyPlan:
    """One with-skill task per query: the target, plus the drawn decoys in group mode."""
    pool, decoys = draw_decoys(spec, exclude={target.name})
    if spec.workspace.mode == "group" and not decoys:
        raise EvalsError("the group workspace has no decoys to stage beside the target", where="decoys",
                         fix="choose decoys=paper or decoys=pool, or give decoys.paths")
    staged = sorted([StagedSkill(skill=target, role="target")] + [StagedSkill(skill=d, role="decoy") for d in decoys],
                    key=lambda s: s.skill.name)
    drawn = spec.workspace.mode == "group" and spec.decoys.size is not None
    tasks = tuple(
        TaskPlan(target=target, case=case, condition="with_skill", workspace_mode=spec.workspace.mode,
                 decoy_set=decoy_set_name(spec), staged=tuple(staged), intervention=target.name,
                 decoy_seed=spec.decoys.seed if drawn else None, decoy_size=spec.decoys.size if drawn else None)
        for case in _cases(target, queries))
    return StudyPlan(targets=(target,), support=(), decoys=tuple(decoys), tasks=tasks,
                     decoy_pool=tuple(sorted(p.name for p in pool)))


def fired_skill(record: TrialRecord, spec: RunSpec, staged: list[str]) -> tuple[str | None, str | None]:
    """(the first skill the trial activated, by staged name, or None; why it decided nothing, or None).

    A trial that activated something decided, whatever happened after; one that did not
    decided "no skill" only if it finished (status ok).
    """
    loaded = load_trial_trajectory(record.trial_dir) if record.trial_dir else None
    traj = loaded.trajectory if loaded is not None else None
    if traj is not None:
        acts = activations(build_view(traj, spec.workspace.workdir).calls, spec.workspace.skills_dir)
        if acts:
            by_norm = {norm_skill(s): s for s in staged}
            return by_norm.get(norm_skill(acts[0].skill), acts[0].skill), None
    if record.status != "ok":
        return None, f"{record.status}: {record.failure_cause or 'no cause recorded'}"
    if traj is None:
        return None, f"no trajectory: {loaded.error if loaded is not None else 'no trial dir'}"
    return None, None


async def run_mode(spec: RunSpec, target: Skill, queries: list[TriggerQuery], out: Path,
                   *, label: str | None = None) -> ModeResult:
    """Emit, run and read one mode's trigger trials into a ``ModeResult`` (keys: skill names)."""
    plan = trigger_plan(spec, target, queries)
    preflight_trials(spec, plan)  # the checks its trials need, before anything is written
    emitted = emit_study(spec, out / "tasks", plan)
    job_dir = await run_job(spec, emitted, out / "jobs")
    write_json(out / KINDS["provenance"].file, build_provenance(spec, planned_skills(plan), job_dir))
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, plan.tasks, strict=True)}
    records = collect_job(job_dir, plans, spec.study.n_attempts)
    staged = [s.skill.name for s in plan.tasks[0].staged]
    keys = {norm_skill(n): n for n in staged}
    by_case: dict[str, QueryResult] = {
        case.id: QueryResult(query=q.query, should_trigger=bool(q.should_trigger), runs=0,
                             expected=None if q.expected_skill is None else keys.get(norm_skill(q.expected_skill),
                                                                                     q.expected_skill))
        for case, q in zip((t.case for t in plan.tasks), queries, strict=True)}
    for record in records:
        result = by_case[record.plan.case.id]
        result.runs += 1
        skill, undecided = fired_skill(record, spec, staged)
        if undecided is not None:
            result.failed += 1
            result.failures.append(f"attempt {record.attempt}: {undecided}")
        else:
            result.fired[skill or NONE] += 1
    return ModeResult(mode=label or spec.workspace.mode, target=target.name, skills=staged,
                      queries=list(by_case.values()))


def with_description(target: Skill, description: str, root: Path) -> Skill:
    """A copy of ``target`` whose SKILL.md frontmatter carries ``description`` (for scoring a candidate)."""
    digest = hashlib.sha256(description.encode()).hexdigest()[:10]
    dest = root / digest / target.path.name
    if not dest.is_dir():
        copy_tree(target.path, dest, exclude=evaluation_asset)  # links out of the skill refused, never followed
        text = (dest / "SKILL.md").read_text(encoding="utf-8")
        _, front, body = text.split("---", 2)
        meta = load_yaml(front) or {}
        meta["description"] = description
        (dest / "SKILL.md").write_text("---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1 << 20)
                                       + "---" + body, encoding="utf-8")
    return load_skill(dest)


class HarnessTrials:
    """Runs trigger trials for one target through the configured harness, one output folder per run set."""

    def __init__(self, overrides: list[str], target: Skill, out: Path, *, runs: int, timeout_sec: float,
                 max_turns: int):
        self.overrides, self.target, self.out = list(overrides), target, usable_output_dir(out)
        self.runs, self.timeout_sec, self.max_turns = runs, timeout_sec, max_turns

    def spec(self, mode: str, folder: Path, skill_path: Path | None = None) -> RunSpec:
        return trigger_spec(self.overrides, skill_path or self.target.path, mode, runs=self.runs, out=folder,
                            timeout_sec=self.timeout_sec, max_turns=self.max_turns)

    async def mode(self, mode: str, queries: list[TriggerQuery]) -> tuple[ModeResult, RunSpec]:
        folder = self.out / mode
        spec = self.spec(mode, folder)
        with study_lock(usable_output_dir(folder)):
            return await run_mode(spec, self.target, queries, folder), spec

    async def isolation_with(self, description: str, queries: list[TriggerQuery]) -> ModeResult:
        """Isolation trials of a copy of the target carrying ``description`` (optimisation)."""
        skill = with_description(self.target, description, self.out / "candidates")
        key = hashlib.sha256(("\n".join(q.query for q in queries)).encode()).hexdigest()[:8]
        folder = self.out / "optimise" / f"{skill.path.parent.name}-{key}"
        spec = self.spec("isolation", folder, skill.path)
        with study_lock(usable_output_dir(folder)):
            return await run_mode(spec, skill, queries, folder)


def model_proposer(spec: RunSpec) -> Judge | None:
    """The harness's own model as the description proposer (a litellm judge), or None without one."""
    if not spec.harness.requires_model or not spec.model.name:
        return None
    from aces_bench.judges.factory import build_judge

    return build_judge(litellm_judge(spec.model.name, base_url=spec.model.base_url, api_key_env=spec.model.api_key_env,
                                     where="model.name"))


def evaluate_with_harness(
    skill_dir: Path, overrides: list[str], *, out: Path, queries_file: Path | None = None, runs: int = 3,
    modes: tuple[str, ...] = ("isolation", "group"), timeout_sec: float = 120.0, max_turns: int = 3,
    judge: Judge | None = None, optimise_description: bool = False, seed: int = 0, test_share: float = 0.4,
) -> TriggerReport:
    """Trigger trials of one skill through the configured harness (see the module docstring).

    Description optimisation scores candidates with real trigger trials where the
    harness is a model's (terminus-2, claude-code, ...), proposed by ``judge`` or else
    the harness's model; on the offline reference agent it uses the agent's router and
    the deterministic proposer, and says so.
    """
    if runs < 1:
        raise EvalsError("runs must be at least 1", where="--runs", fix="give --runs 1 or more")
    unknown = [m for m in modes if m not in ("isolation", "group")]
    if unknown or not modes:
        raise EvalsError(f"unknown workspace mode(s): {', '.join(unknown) or '(none given)'}", where="--modes",
                         fix="give isolation, group or both")
    target = load_skill(Path(skill_dir))
    queries, sources = load_queries(target, queries_file)
    trials = HarnessTrials(overrides, target, out, runs=runs, timeout_sec=timeout_sec, max_turns=max_turns)

    async def go() -> TriggerReport:
        results, specs = [], []
        for mode in modes:
            result, spec = await trials.mode(mode, queries)
            results.append(result)
            specs.append(spec)
        spec = specs[0]
        notes = [f"trigger trial: {stop_rule(spec)}; what fired is read from each trajectory with the graders' "
                 "activation rule (first activation decides)"]
        if spec.harness.import_path == REFERENCE and runs > 1:
            notes.append(f"the reference agent is deterministic: its {runs} runs per query repeat one decision, so "
                         "the intervals, which count them as independent, are narrower than the evidence")
        notes += [f"{m.mode}: {m.totals()['failed']} of {m.totals()['runs']} trial(s) failed or timed out before "
                  "any activation: counted, not scored" for m in results if m.totals()["failed"]]
        report = TriggerReport(skill=target.name, router=harness_label(spec), runs=runs, sources=sources,
                               modes=results, notes=notes, method="harness")
        if optimise_description:
            if spec.harness.import_path == REFERENCE:
                router = Router()
                evaluate = router_evaluator(target, router, 1)
                report.scored_by = f"{router.label}: offline, no trials run"
                proposer = judge
            else:
                evaluate = trials.isolation_with
                report.scored_by = f"trigger trials of {harness_label(spec)}, isolation"
                proposer = judge or model_proposer(spec)
            report.candidates, report.chosen, report.split = await optimise(
                target, queries, evaluate, judge=proposer, seed=seed, test_share=test_share)
        return report

    return asyncio.run(go())
