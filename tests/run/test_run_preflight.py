"""Preflight before any trial; a study whose first trials fail alike stops early; failed
trials make the command exit 1; infrastructure failures run again on resume."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.studies import FIXTURE_SKILL, run_cli

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import BackendError
from aces_bench.run import runner
from aces_bench.run.attempts import retry_infra_failures, stops_early
from aces_bench.study import preflight

_HAS_MODAL = importlib.util.find_spec("modal") is not None


@pytest.mark.skipif(not _HAS_MODAL, reason="the modal SDK is not installed (pip install 'aces-bench[modal]')")
def test_modal_without_credentials_stops_before_any_trial(tmp_path):
    home = tmp_path / "home"  # no ~/.modal.toml
    home.mkdir()
    out = tmp_path / "out"
    proc = run_cli("backend=modal", "harness=claude-code", "model=claude-sonnet", "skill=custom",
                   f"skill.paths=[{FIXTURE_SKILL}]", f"hydra.run.dir={out}",
                   env={"HOME": str(home), "ANTHROPIC_API_KEY": "sk-test", "MODAL_TOKEN_ID": "", "MODAL_TOKEN_SECRET": ""})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("error: backend=modal: cannot start: Modal requires authentication."), proc.stderr
    assert "MODAL_TOKEN_ID and MODAL_TOKEN_SECRET" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "jobs").exists() and not (out / "tasks").exists()  # refused before emitting


def test_a_cli_that_would_install_itself_from_an_unreachable_host_is_refused(tmp_path, monkeypatch):
    """claude-code on a container backend installs itself from the network; without it the
    refusal comes at once, not after minutes of a failing installer per trial."""
    spec = compose_spec(["backend=podman", "workspace.network=public", "harness=claude-code", "model=claude-sonnet"],
                        output_dir=tmp_path)
    asked = []
    monkeypatch.setattr(preflight, "unreachable", lambda host, **kw: asked.append(host) or "its name does not resolve")
    with pytest.raises(BackendError) as err:
        preflight.preflight_agent_install(spec)
    assert asked == ["downloads.claude.ai"]
    assert ("harness=claude-code on backend=podman installs @anthropic-ai/claude-code inside each container from "
            "the network (Harbor's installer), but downloads.claude.ai is not reachable from here") in str(err.value)
    assert "use backend=local" in str(err.value)
    monkeypatch.setattr(preflight, "unreachable", lambda host, **kw: None)
    preflight.preflight_agent_install(spec)
    # backend=local mounts the CLI: nothing is installed, nothing is checked.
    local = compose_spec(["harness=claude-code", "model=claude-sonnet"], output_dir=tmp_path)
    monkeypatch.setattr(preflight, "unreachable", lambda host, **kw: pytest.fail("checked on backend=local"))
    preflight.preflight_agent_install(local)


def test_unreachable_names_why():
    assert preflight.unreachable("name.invalid", timeout=2) == "its name does not resolve"


def _event(name: str, exc_type: str | None, message: str = "", side: str | None = None):
    info = SimpleNamespace(exception_type=exc_type, exception_message=message) if exc_type else None
    side = side or ("with_skill" if name[-1] in "02468ac" else "baseline")
    return SimpleNamespace(trial_name=name, result=SimpleNamespace(exception_info=info, side=side))


def _rule(result):
    return None if result.exception_info.exception_type == "AgentTimeoutError" else result.side


def _watch(events, total=10, eligible=_rule):
    watch = runner.FailureWatch(total, eligible=eligible)

    async def feed():
        for e in events:
            await watch.on_end(e)

    asyncio.run(feed())
    return watch


def test_the_first_trials_failing_alike_stop_the_study():
    err = "NonZeroAgentExitCodeError: 401 Unauthorized for /tmp/job-{}/x (request {})"
    watch = _watch([_event(f"t{i}", "NonZeroAgentExitCodeError", err.format(i, 1000 + i)) for i in range(3)])
    assert watch.stopped.startswith("NonZeroAgentExitCodeError: NonZeroAgentExitCodeError: 401 Unauthorized")
    assert "stopped early: the first 3 trial(s) all failed with" in str(watch.error(Path("j")))
    # a success, a second cause, or a failure of the arm itself (a timeout) turns it off
    assert _watch([_event("a", "X", "boom"), _event("b", None), _event("c", "X", "boom"),
                   _event("d", "X", "boom")]).stopped is None
    assert _watch([_event("a", "X", "boom"), _event("b", "Y", "bang"), _event("c", "X", "boom"),
                   _event("d", "X", "boom")]).stopped is None
    assert _watch([_event(f"t{i}", "AgentTimeoutError", "timed out") for i in range(5)]).stopped is None
    assert _watch([_event(f"t{i}", "X", "boom") for i in range(5)], eligible=None).stopped is None  # off
    assert _watch([_event("a", "X", "boom")], total=1).stopped is None  # one trial is not a pattern
    # A skill crashing every with-skill trial alike does not stop its own measurement:
    # the same failure must hit the baseline too.
    crashes = [_event(f"t{i}", "X", "boom", side="with_skill") for i in range(5)]
    assert _watch(crashes).stopped is None
    assert _watch([*crashes, _event("b", "X", "boom", side="baseline")]).stopped is not None


def test_which_failures_may_stop_a_study():
    def result(exc_type, *, agent_ran=True):
        # Issue 22: a failure is infrastructure only before the agent started.
        started = SimpleNamespace(started_at="2026-01-01T00:00:00") if agent_ran else None
        return SimpleNamespace(exception_info=SimpleNamespace(exception_type=exc_type, exception_message="m"),
                               verifier_result=None, agent_execution=started)

    assert stops_early(result("EnvironmentStartTimeoutError", agent_ran=False)) and stops_early(result("SomeAgentCrash"))
    assert not stops_early(result("AgentTimeoutError")) and not stops_early(result("RewardFileNotFoundError"))


def test_infrastructure_failures_run_again_on_resume(tmp_path):
    """A trial dir whose result is an infrastructure failure is removed (Harbor redoes it);
    an agent's own failure is kept as data."""
    # A result.json Harbor wrote for a reference-agent trial, given three different endings.
    source = Path(__file__).resolve().parent / "fixtures" / "trial-result-ok.json"
    job = tmp_path / "job"
    # infra__a's environment never started, so its agent never ran (the only infrastructure
    # failure issue 22 reruns); verifier__d's (the separate verifier's) failed to start after
    # the agent ran, from the workspace the skill left: a failure of its arm, kept.
    for name, exc in (("infra__a", "EnvironmentStartTimeoutError"), ("agent__b", "SomeAgentCrash"), ("ok__c", None),
                      ("verifier__d", "EnvironmentStartTimeoutError")):
        (job / name).mkdir(parents=True)
        data = json.loads(source.read_text())
        if name == "infra__a":
            data["agent_execution"] = None
        data["exception_info"] = None if exc is None else {
            "exception_type": exc, "exception_message": "m", "exception_traceback": "", "occurred_at": data.get(
                "started_at") or "2026-01-01T00:00:00"}
        (job / name / "result.json").write_text(json.dumps(data))
    assert retry_infra_failures(job) == ["infra__a"]
    assert sorted(p.name for p in job.iterdir()) == ["agent__b", "ok__c", "verifier__d"]
    shutil.rmtree(job)
    assert retry_infra_failures(job) == []
