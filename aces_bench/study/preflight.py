"""One preflight step: every check that can refuse a study, run once, before anything is emitted or run.

``preflight_study(spec, plan)`` runs every check below on the planned study and raises
one error carrying every problem found (``PreflightError``; the problem itself when
there is one), so a user fixes them in one pass instead of discovering them one run at
a time, and after nothing was emitted or spent:

- backend: the SDK extra of a cloud backend, a plugin backend's own check, the backend's
  credential check (Harbor's environment preflight), docker and podman;
- agent: an agent that would install itself into the read-only local sandbox, Harbor's
  agent preflight, the npm installer hosts;
- credentials: a case naming an operator credential, a case's credentials unset on the host;
- the model's key;
- the grading mode's author graders;
- the judge: its kind, its model and key (it is built here and handed back);
- the cost: a cap (``study.max_cost_usd``) on a model with no price (the estimate against
  the cap waits for the job: reused baseline trials are known only after emission).

A check that needs an earlier one to pass (Harbor's environment preflight needs the
backend's SDK) is skipped when that one failed. The runner keeps its own ``preflight``
for callers that run a job directly (``aces-bench trigger``); a study's jobs are told
it ran (``checked=True``), so nothing is checked twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError
from aces_bench.emitters.plan import StudyPlan
from aces_bench.graders.modes import check_author_graders
from aces_bench.judges.base import Judge
from aces_bench.judges.factory import build_judge
from aces_bench.run import runner
from aces_bench.run.cost import check_cap, estimate


class PreflightError(AcesError):
    """Several checks refused the study: every problem, each with where and how to fix it."""

    def __init__(self, problems: list[AcesError]):
        self.problems = problems
        lines = [f"this study cannot start: {len(problems)} problems (nothing was emitted or run)"]
        for n, problem in enumerate(problems, 1):
            text = str(problem).replace("\n", "\n     ")
            lines.append(f"  {n}. {text}")
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[], object]
    needs: tuple[str, ...] = ()


def _backend_type_check(spec: RunSpec) -> None:
    if spec.backend.type == "docker":
        runner.preflight_docker()
    if spec.backend.type == "podman":
        from aces_bench.backends import podman

        podman.preflight()


def _credentials(spec: RunSpec, plan: StudyPlan) -> None:
    cases = {id(p.case): p.case for p in plan.tasks}.values()
    from aces_bench.cases import resolve_credentials

    for case in cases:
        resolve_credentials(case, os.environ, operator_names=runner.operator_variables(spec),
                            allowed=spec.skill.allow_credentials)


def _cost(spec: RunSpec, plan: StudyPlan) -> None:
    """A cost cap on a model litellm has no price for cannot be held: refused here. The
    estimate against the cap is the cost guard's, when the job starts (``runner.cost_guard``):
    baseline trials found in the reuse store are neither run nor counted, and which they
    are is known only once the tasks are emitted (their ids key the store); a sequential
    study is stopped by the cap as it runs."""
    if spec.study.max_cost_usd is None:
        return
    est = estimate(spec, len(plan.tasks) * spec.study.n_attempts)
    if est.usd is None:
        check_cap(spec, est)


def checks(spec: RunSpec, plan: StudyPlan, judge: list[Judge]) -> list[Check]:
    """The study's checks, in the order their problems are listed."""
    run = not spec.emit_only  # emit_only writes task dirs and runs nothing: no backend, agent or cost check
    out = [
        Check("credential names", lambda: runner.check_credential_names(spec, plan)),
        Check("author graders", lambda: check_author_graders(spec.grading.mode,
                                                               {s.name: s.path for s in plan.targets})),
        Check("judge", lambda: judge.append(build_judge(spec.judge))),
    ]
    if run:
        out += [
            Check("backend extra", lambda: runner.preflight_backend_extra(spec)),
            Check("plugin backend", lambda: runner.preflight_plugin_backend(spec)),
            Check("backend", lambda: runner.preflight_environment(spec), needs=("backend extra",)),
            Check("docker or podman", lambda: _backend_type_check(spec)),
            Check("model key", lambda: runner.preflight_model_key(spec)),
            Check("local agent", lambda: runner.preflight_local_agent(spec)),
            # Harbor's agent preflight asks for the model key too: said once, by the check above
            Check("agent", lambda: runner.preflight_agent(spec), needs=("local agent", "model key")),
            Check("agent install", lambda: runner.preflight_agent_install(spec), needs=("local agent",)),
            Check("credentials", lambda: _credentials(spec, plan), needs=("credential names",)),
            Check("cost", lambda: _cost(spec, plan)),
        ]
    return out


def preflight_study(spec: RunSpec, plan: StudyPlan) -> Judge:
    """Run every check; return the study's judge, or raise every problem at once."""
    judge: list[Judge] = []
    failed: set[str] = set()
    problems: list[AcesError] = []
    for check in checks(spec, plan, judge):
        if failed.intersection(check.needs):
            failed.add(check.name)
            continue
        try:
            check.run()
        except AcesError as exc:
            failed.add(check.name)
            problems.append(exc)
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise PreflightError(problems)
    return judge[0]
