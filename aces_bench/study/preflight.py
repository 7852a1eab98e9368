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
- the cost: a cap (``study.max_cost_usd``) on a model with no price, or one that the
  trials no baseline store can supply already pass (the exact estimate, net of reused
  baseline trials, is the job's: those are known only after emission);
- the model endpoint: ``model.base_url`` must answer within ``ENDPOINT_TIMEOUT_SEC``,
  named with its URL, before any task is written or trial started.

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
from aces_bench.core.errors import AcesError, RunError
from aces_bench.emitters.plan import StudyPlan
from aces_bench.graders.modes import check_author_graders
from aces_bench.judges.base import Judge
from aces_bench.judges.factory import build_judge
from aces_bench.run import runner
from aces_bench.run.cost import Ledger, budget_dir, check_cap, estimate


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


REUSABLE = ("baseline", "null")  # conditions whose trials the baseline store may supply


def _cost(spec: RunSpec, plan: StudyPlan) -> None:
    """A cost cap on a model litellm has no price for cannot be held, and a cap that even the
    trials no store can supply would pass: both refused here, before any task is written.

    The exact estimate against the cap is the cost guard's, when the job starts
    (``runner.cost_guard``): baseline and null trials found in the reuse store are neither
    run nor counted, and which they are is known only once the tasks are emitted (their ids
    key the store). So this check counts only the trials that always run (with skill,
    placebo, forced; every trial when ``study.reuse_baseline=false``): whatever the store
    supplies, a fresh study would pass the cap. A study that already spent (a resumed one)
    is left to the job's guard, which counts only the trials still to run; a sequential
    study is stopped by the cap as it runs (it may stop before running them all)."""
    if spec.study.max_cost_usd is None:
        return
    est = estimate(spec, len(plan.tasks) * spec.study.n_attempts)
    if est.usd is None:
        check_cap(spec, est)
    if spec.study.sequential:
        return
    if Ledger(budget_dir(spec)).spent():
        return  # a resumed study: which trials are still to run is the job's to count, net of those done
    always = [t for t in plan.tasks if not (spec.study.reuse_baseline and t.condition in REUSABLE)]
    least = estimate(spec, len(always) * spec.study.n_attempts)
    cap = spec.study.max_cost_usd
    if least.usd is not None and least.trials and least.usd > cap:
        which = "every trial" if len(always) == len(plan.tasks) else "the trials no baseline store can supply"
        raise RunError(
            f"{which} ({least.trials} of {est.trials}) are estimated at ${least.usd:,.4f}, above "
            f"study.max_cost_usd=${cap:,.4f}; nothing was written", where="study.max_cost_usd",
            fix="raise study.max_cost_usd, or run fewer trials (skill.cases, study.n_attempts); "
            "study.expected_input_tokens/expected_output_tokens set the per-trial estimate")


ENDPOINT_TIMEOUT_SEC = 8.0


def _endpoint(spec: RunSpec) -> None:
    """``model.base_url`` answers (any HTTP status: 401 or 404 is an answer), or one error naming it.

    Checked from the host for the local backend only, whose sandbox reaches the endpoint the
    host reaches; a container or cloud backend may use a name only it resolves."""
    url = spec.model.base_url
    if not url or not spec.harness.requires_model or not spec.backend.is_local:
        return
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=ENDPOINT_TIMEOUT_SEC):
            return
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise RunError(f"the model endpoint {url} does not answer ({reason}; waited at most "
                       f"{ENDPOINT_TIMEOUT_SEC:g} s)", where="model.base_url",
                       fix="start the model server, or correct model.base_url (scheme, host and port)") from None


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
            Check("model endpoint", lambda: _endpoint(spec)),
            # Building the agent imports Harbor's agent and litellm (seconds of CPU): an endpoint that
            # does not answer is said first, alone, within seconds.
            Check("local agent", lambda: runner.preflight_local_agent(spec), needs=("model endpoint",)),
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
