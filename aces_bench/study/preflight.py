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
  trials no baseline store can supply already pass (``run.cost.check_planned``, beside the
  estimate it uses; the exact estimate, net of reused baseline trials, is the job's: those
  are known only after emission);
- the model endpoint: ``model.base_url`` must answer within ``ENDPOINT_TIMEOUT_SEC``,
  named with its URL, before any task is written or trial started.

A check that needs an earlier one to pass (Harbor's environment preflight needs the
backend's SDK) is skipped when that one failed. Every check is listed here (written here,
but for the cost's), and nothing else checks again: the runner runs jobs only
(``aces-bench trigger`` runs ``preflight_trials``, the checks its trials need, before its
first job).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from aces_bench.cases.credentials import check_study_credentials
from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError, BackendError, ConfigError, RunError
from aces_bench.emitters.plan import StudyPlan
from aces_bench.graders.modes import check_author_graders
from aces_bench.judges.base import Judge
from aces_bench.judges.factory import build_judge
from aces_bench.run import cost, runner


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
    trials: bool = True  # a run of trials needs it whoever runs it (``aces-bench trigger`` too), not only a study


def _backend_type_check(spec: RunSpec) -> None:
    if spec.backend.type == "docker":
        preflight_docker()
    if spec.backend.type == "podman":
        from aces_bench.backends import podman

        podman.preflight()


def _credentials(spec: RunSpec, plan: StudyPlan, operators: list[str]) -> None:
    cases = {id(p.case): p.case for p in plan.tasks}.values()
    from aces_bench.cases import resolve_credentials

    for case in cases:
        resolve_credentials(case, os.environ, operator_names=operators, allowed=spec.skill.allow_credentials)


# --- the backend, the agent, the credentials and the model key ---------------------------------

def operator_variables(spec: RunSpec) -> list[str]:
    """The variables the operator configured for the model and the judge."""
    return [n for n in (spec.model.api_key_env, spec.judge.api_key_env) if n]


def check_credential_names(spec: RunSpec, plan: StudyPlan, operators: list[str]) -> None:
    """Refuse, before anything is emitted, a case naming an operator credential (by rule;
    ``operators``: ``operator_variables``)."""
    check_study_credentials({id(p.case): p.case for p in plan.tasks}.values(),
                            allowed=spec.skill.allow_credentials, operator_names=operators)


# What each cloud backend's preflight wants, when Harbor's own message names no fix.
_BACKEND_FIXES = {
    "modal": "run `modal token new`, or export MODAL_TOKEN_ID and MODAL_TOKEN_SECRET",
    "daytona": "export DAYTONA_API_KEY (and DAYTONA_API_URL for a self-hosted Daytona)",
    "e2b": "export E2B_API_KEY",
    "runloop": "export RUNLOOP_API_KEY",
    "gke": "install gcloud and run `gcloud container clusters get-credentials <CLUSTER> --region <REGION>` "
           "(or set KUBECONFIG)",
}


def preflight_environment(spec: RunSpec) -> None:
    """The backend's own credential check (Harbor's ``preflight``, which its CLI runs and
    its job API does not), as one error before any trial instead of one failure per trial."""
    from harbor.environments.factory import EnvironmentFactory
    from harbor.models.environment_type import EnvironmentType

    b = spec.backend
    if b.type not in BACKEND_SDKS:
        # docker and podman are checked by aces-bench itself (preflight_docker, backends.podman):
        # Harbor's podman check asks for `podman compose`, which the podman-compose setup here
        # (make podman) does not provide although its trials run.
        return
    try:
        EnvironmentFactory.run_preflight(type=EnvironmentType(b.type) if b.type else None, import_path=b.import_path)
    except SystemExit as exc:
        message = " ".join(str(exc.code if exc.code is not None else exc).split())
        raise BackendError(f"cannot start: {message}", where=f"backend={b.name}",
                           fix=_BACKEND_FIXES.get(b.type or "", "set up the backend's credentials, or use backend=local")
                           ) from None
    except ImportError as exc:
        raise BackendError(str(exc).splitlines()[0], where=f"backend={b.name}",
                           fix="install the backend's extra (see the message), or use backend=local") from None


def preflight_agent(spec: RunSpec) -> None:
    """The agent's own checks (its options, its model credentials) before any trial."""
    if not spec.harness.requires_model and spec.harness.import_path and spec.harness.cli is None:
        return  # the reference agent: nothing to check, and no Harbor agent class to load by name
    from harbor.agents.factory import AgentFactory

    try:
        AgentFactory.run_preflight(runner.agent_config(spec))
    except SystemExit as exc:
        raise ConfigError(f"cannot start: {exc.code}", where=f"harness={spec.harness.name}",
                          fix="see the message") from None
    except ValueError as exc:  # MissingModelCredentialError is one
        raise ConfigError(f"cannot start: {' '.join(str(exc).split())}", where=f"harness={spec.harness.name}",
                          fix="set what the message names (model.api_key_env, harness.kwargs)") from None


# Backends that run their containers on this machine: an agent installing itself there
# fetches its CLI through this machine's network.
_LOCAL_CONTAINER_BACKENDS = ("docker", "podman")


def preflight_agent_install(spec: RunSpec, *, timeout: float = 5.0) -> None:
    """A CLI harness on a container backend installs itself inside each container from the
    network (Harbor's installer); where that network is not reachable it would spend minutes
    per trial failing, so it is refused here, before any trial."""
    from aces_bench.agents.clis import CLIS

    cli = CLIS.get(spec.harness.cli or "")
    if cli is None or spec.backend.is_local or spec.backend.type not in _LOCAL_CONTAINER_BACKENDS:
        return
    for host in cli.install_hosts:
        problem = unreachable(host, timeout=timeout)
        if problem:
            raise BackendError(
                f"harness={spec.harness.name} on backend={spec.backend.name} installs {cli.package} inside each "
                f"container from the network (Harbor's installer), but {host} is not reachable from here ({problem})",
                where=f"backend={spec.backend.name}",
                fix=f"use backend=local (the CLI from `aces-bench agents install {cli.name}` is mounted, nothing "
                "is installed), or give this machine network access to the install hosts",
            )


def unreachable(host: str, port: int = 443, *, timeout: float = 5.0) -> str | None:
    """Why ``host:port`` cannot be reached (a short reason), or None when a TCP connection opens."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return "its name does not resolve"
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        return exc.strerror or str(exc)


# backend type -> (the SDK module Harbor needs, the aces-bench extra bringing it: pyproject.toml).
BACKEND_SDKS = {
    "modal": ("modal", "modal"),
    "daytona": ("daytona", "daytona"),
    "e2b": ("e2b", "e2b"),
    "runloop": ("runloop_api_client", "runloop"),
    "gke": ("kubernetes", "gke"),
}


def preflight_backend_extra(spec: RunSpec) -> None:
    """A cloud backend whose SDK is not installed is refused with the extra to install,
    before any trial (Harbor would fail each trial and end in an ExceptionGroup)."""
    import importlib.util

    entry = BACKEND_SDKS.get(spec.backend.type or "")
    if entry is None:
        return
    module, extra = entry
    if importlib.util.find_spec(module) is None:
        raise BackendError(
            f"backend={spec.backend.name} needs the {module} package, which is not installed",
            where="backend",
            fix=f"pip install 'aces-bench[{extra}]' (or choose backend=local or backend=docker)",
        )


def preflight_plugin_backend(spec: RunSpec) -> None:
    """A plugin backend's own check (``BackendProfile.preflight``), before any trial."""
    from aces_bench.backends import BACKENDS
    from aces_bench.core.registry import load_path

    if spec.backend.name not in BACKENDS:
        return
    check = BACKENDS.get(spec.backend.name).preflight
    if check:
        load_path(check)(spec)


def preflight_local_agent(spec: RunSpec) -> None:
    """An agent that installs itself inside the environment is refused on the local
    backend (host userland read-only) unless its CLI is provisioned, before any trial."""
    if (spec.backend.is_local and spec.harness.agent and spec.harness.cli is None
            and installs_itself(spec.harness.agent)):
        raise ConfigError(
            f"harness {spec.harness.name!r} installs itself inside the environment (packages, network), "
            "which the local sandbox (host userland read-only) cannot do",
            where="harness",
            fix="use harness=claude-code, codex or opencode (provisioned by `aces-bench agents install`), "
            "backend=docker or a cloud backend",
        )


def installs_itself(agent: str) -> bool:
    """Whether a Harbor agent is an installed agent (it sets itself up inside the environment)."""
    from harbor.agents.factory import AgentFactory
    from harbor.agents.installed.base import BaseInstalledAgent
    from harbor.models.agent.name import AgentName

    try:
        return issubclass(AgentFactory.get_agent_class(AgentName(agent)), BaseInstalledAgent)
    except (ValueError, ImportError):
        return False


def preflight_model_key(spec: RunSpec) -> None:
    """The agent's model key must be set on the host (the agent calls the model from there)."""
    name = spec.model.api_key_env
    if spec.harness.requires_model and name and not os.environ.get(name):
        raise ConfigError(
            f"model.api_key_env names {name}, which is not set in the environment",
            where="model",
            fix=f"export {name}=<key>; for a keyless local server (model.base_url) any dummy value works",
        )


def preflight_docker() -> None:
    """backend=docker needs a reachable Docker engine; without one every trial would fail."""
    try:
        probe = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                               text=True, timeout=20)
        problem = None if probe.returncode == 0 else (probe.stderr.strip().splitlines() or ["no answer"])[-1]
    except FileNotFoundError:
        problem = "the docker command is not installed"
    except subprocess.TimeoutExpired:
        problem = "docker info did not answer within 20 s"
    if problem:
        raise BackendError(
            f"backend=docker but no Docker engine is reachable: {problem}",
            where="backend",
            fix="start the Docker daemon (or set DOCKER_HOST), or run with backend=local or a cloud backend",
        )



# --- the cost and the model endpoint --------------------------------------------------------

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
    operators = operator_variables(spec)
    out = [
        Check("credential names", lambda: check_credential_names(spec, plan, operators)),
        Check("author graders", lambda: check_author_graders(spec.grading.mode,
                                                               {s.name: s.path for s in plan.targets}), trials=False),
        Check("judge", lambda: judge.append(build_judge(spec.judge)), trials=False),
    ]
    if run:
        out += [
            Check("backend extra", lambda: preflight_backend_extra(spec)),
            Check("plugin backend", lambda: preflight_plugin_backend(spec)),
            Check("backend", lambda: preflight_environment(spec), needs=("backend extra",)),
            Check("docker or podman", lambda: _backend_type_check(spec)),
            Check("model key", lambda: preflight_model_key(spec)),
            Check("model endpoint", lambda: _endpoint(spec)),
            Check("cost", lambda: cost.check_planned(spec, [t.condition for t in plan.tasks]), trials=False),
            # Building the agent imports Harbor's agent and litellm (seconds of CPU): an endpoint that
            # does not answer, or a cost cap the study would pass, is said first, alone, within seconds.
            Check("local agent", lambda: preflight_local_agent(spec), needs=("model endpoint", "cost")),
            # Harbor's agent preflight asks for the model key too: said once, by the check above
            Check("agent", lambda: preflight_agent(spec), needs=("local agent", "model key")),
            Check("agent install", lambda: preflight_agent_install(spec), needs=("local agent",)),
            Check("credentials", lambda: _credentials(spec, plan, operators), needs=("credential names",)),
        ]
    return out


def _run_checks(checks: list[Check]) -> None:
    """Run ``checks`` in order (one whose needs failed is skipped); raise every problem at once."""
    failed: set[str] = set()
    problems: list[AcesError] = []
    for check in checks:
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


def preflight_study(spec: RunSpec, plan: StudyPlan) -> Judge:
    """Run every check; return the study's judge, or raise every problem at once."""
    judge: list[Judge] = []
    _run_checks(checks(spec, plan, judge))
    return judge[0]


def preflight_trials(spec: RunSpec, plan: StudyPlan) -> None:
    """The checks any run of trials needs (``Check.trials``: ``aces-bench trigger`` has no judge,
    grading or cost cap) on ``plan``, before its first job; every problem at once."""
    _run_checks([c for c in checks(spec, plan, []) if c.trials])
