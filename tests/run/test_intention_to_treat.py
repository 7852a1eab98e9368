"""Intention to treat: which failed trials are their arm's failures and which are
infrastructure's (aces_bench/run/collect.py), infrastructure reruns (aces_bench/run/attempts.py),
and every scheduled pair in the analysis (docs/gate.md)."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest
from harbor.models.trial.result import TrialResult
from support.grading import trial_result, write_trial

from aces_bench.config.compose import compose_spec
from aces_bench.records.trials import read_trials_table
from aces_bench.run.collect import archive_infra_failures, classify, read_retries
from aces_bench.study.entry import run_study

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"


def _failed(kind: str, *, agent_started: bool) -> TrialResult:
    raw = trial_result("task-a", "task-a__x", None)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    raw["exception_info"] = {"exception_type": kind, "exception_message": "boom", "exception_traceback": "",
                             "occurred_at": t0.isoformat()}
    if agent_started:
        raw["agent_execution"] = {"started_at": (t0 + timedelta(seconds=1)).isoformat()}
    return TrialResult.model_validate(raw)


@pytest.mark.parametrize(("kind", "started", "status"), [
    # Before the agent ran, nothing of the agent or a skill had run: infrastructure.
    ("SandboxBuildFailedError", False, "infra_error"), ("BackendError", False, "infra_error"),
    ("AgentSetupTimeoutError", False, "infra_error"), ("EnvironmentStartTimeoutError", False, "infra_error"),
    # A model provider's own failure, whenever it comes.
    ("RateLimitError", True, "infra_error"), ("ApiOverloadedError", True, "infra_error"),
    ("InternalServerError", True, "infra_error"),
    # After the agent started, the backend's errors may be what a skill did: the arm's failure.
    ("BackendError", True, "agent_error"), ("AddTestsDirError", True, "agent_error"),
    ("DownloadVerifierDirError", True, "agent_error"), ("RuntimeError", True, "agent_error"),
    ("EnvironmentStartTimeoutError", True, "agent_error"),  # the verifier's environment, from the skill's workspace
    ("ContextLengthExceededError", True, "agent_error"),
    ("AgentTimeoutError", True, "timeout"), ("VerifierTimeoutError", True, "timeout"),
    ("RewardFileNotFoundError", True, "verifier_error"),
])
def test_only_failures_shown_to_be_infrastructure_are_infrastructure(kind, started, status):
    got, cause = classify(_failed(kind, agent_started=started))
    assert got == status and cause.startswith(kind)
    if status == "agent_error":
        assert "after the agent started (a failure of its arm)" in cause


def test_infrastructure_failures_are_set_aside_within_their_budget_and_counted(tmp_path):
    job = tmp_path / "jobs" / "job"
    raw = trial_result("task-a", "task-a__1", None)
    raw["exception_info"] = {"exception_type": "SandboxBuildFailedError", "exception_message": "no image",
                             "exception_traceback": "", "occurred_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat()}
    write_trial(job, "task-a__1", None, raw)
    arm = trial_result("task-b", "task-b__1", None)
    arm["exception_info"] = {**raw["exception_info"], "exception_type": "AgentTimeoutError"}
    write_trial(job, "task-b__1", None, arm)
    assert archive_infra_failures(job, {"task-a": 1, "task-b": 1}) == ["task-a__1"]
    assert not (job / "task-a__1").exists() and (job / "task-b__1").exists()  # a timeout is never rerun
    assert read_retries(job) == {"task-a": [{"trial": "task-a__1", "cause": "SandboxBuildFailedError before the "
                                             "agent started: no image"}]}
    write_trial(job, "task-a__2", None, {**raw, "trial_name": "task-a__2"})
    assert archive_infra_failures(job, {"task-a": 1}) == []  # the budget is spent: it stays, and is excluded


@pytest.mark.sandbox
@pytest.mark.parametrize(("retries", "failures", "status"), [(2, 1, "ok"), (0, 1, "infra_error"),
                                                             (1, 5, "infra_error")])
def test_a_trial_whose_environment_did_not_start_is_rerun_and_else_excluded(tmp_path, retries, failures, status):
    out = tmp_path / "out"
    spec = compose_spec(["skill=custom", f"skill.paths=[{SKILL}]", "skill.cases=[explicit-1]", "report=false",
                         "backend.import_path=support.flaky_environment:FlakyStartEnvironment",
                         f"+backend.kwargs.root_parent={tmp_path}", f"study.max_infra_retries={retries}"],
                        output_dir=out)
    with mock.patch.dict(os.environ, {"ACES_TEST_FLAKY_DIR": str(tmp_path / "starts"),
                                      "ACES_TEST_FLAKY_FAILURES": str(failures)}):
        run_study(spec)
    trials = read_trials_table(out)
    assert set(trials["status"]) == {status}
    starts = {p.name: int(p.read_text()) for p in (tmp_path / "starts").iterdir()}
    # Agent environments started (the failed ones and the one that ran), and for a trial that ran,
    # the verifier's separate environment (a second instance of the same class).
    agent_starts = min(failures, retries) + 1
    assert sorted(starts.values()) == [agent_starts + (status == "ok")] * 2
    if status == "ok":
        (job,) = [p for p in (out / "jobs").iterdir() if p.is_dir() and not p.name.endswith(".infra-retries")]
        assert sum(len(v) for v in read_retries(job).values()) == 2
        assert all(trials["trial_class"] == "finished")
    else:
        # Excluded, counted: no outcome, no pass, never a 0 for either arm.
        assert trials["outcome"].isna().all() and trials["final_pass"].isna().all()
        assert all(trials["trial_class"] == "excluded")
        assert all("before the agent started" in c for c in trials["failure_cause"])
        if retries:
            assert all(c.endswith(f"(still failing after {retries} infrastructure rerun(s) of this task)")
                       for c in trials["failure_cause"])
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    assert len(grades) == 2


def test_provider_errors_are_harbors_own_retryable_provider_failures():
    from harbor.models.trial.error_policy import FailureCause, policy_for

    from aces_bench.run.collect import PROVIDER_ERRORS, provider_failure

    harbors = {"ApiRateLimitError", "ApiOverloadedError", "ApiInternalServerError", "RateLimitError",
               "ServiceUnavailableError", "APIConnectionError"}
    assert harbors <= PROVIDER_ERRORS
    for name in PROVIDER_ERRORS - {"BadGatewayError"}:
        policy = policy_for(name)
        assert policy.cause is FailureCause.MODEL_PROVIDER_FAILED and policy.retry, name
    # Harbor's own non-retryable provider failures (a wrong key, an unknown model) and its
    # "agent exhausted its budget" class are the arm's once the agent ran.
    for name in ("AuthenticationError", "ModelNotFoundError", "BadRequestError", "ContextWindowExceededError"):
        assert classify(_failed(name, agent_started=True))[0] == "agent_error", name
    status, cause = classify(_failed("ApiRateLimitError", agent_started=True))
    assert provider_failure(status, cause)
    status, cause = classify(_failed("SandboxBuildFailedError", agent_started=False))
    assert status == "infra_error" and not provider_failure(status, cause)
