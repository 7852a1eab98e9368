"""Real Harbor jobs on the local backend, loaded by import path, with the oracle agent."""

from __future__ import annotations

import json
import os

import pytest
from harbor.job import Job
from harbor.models.job.config import DatasetConfig, JobConfig
from harbor.models.trial.config import AgentConfig, EnvironmentConfig
from harbor.models.trial.paths import TrialPaths
from support.backends import processes_matching, sync, write_task

from aces_bench.backends.local import IMPORT_PATH
from aces_bench.backends.provenance import PROVENANCE_FILE

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(120)]

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _job_config(tmp_path, dataset, **env_kwargs) -> JobConfig:
    return JobConfig(
        job_name="local-backend",
        jobs_dir=tmp_path / "jobs",
        n_concurrent_trials=2,
        quiet=True,
        agents=[AgentConfig(name="oracle")],
        datasets=[DatasetConfig(path=dataset)],
        environment=EnvironmentConfig(
            import_path=IMPORT_PATH,
            kwargs={"root_parent": str(tmp_path / "roots"), **env_kwargs},
        ),
    )


@sync
async def test_backends_oracle_job_rewards_pass_and_fail(tmp_path):
    dataset = tmp_path / "dataset"
    write_task(dataset, "solves", answer="42")
    write_task(dataset, "fails", answer="41")
    (tmp_path / "roots").mkdir()

    job = await Job.create(_job_config(tmp_path, dataset))
    result = await job.run()

    by_task = {trial.task_name: trial for trial in result.trial_results}
    assert sorted(by_task) == ["aces/fails", "aces/solves"]
    for trial in by_task.values():
        assert trial.exception_info is None, trial.exception_info
    assert by_task["aces/solves"].verifier_result.rewards == {"reward": 1.0}
    assert by_task["aces/fails"].verifier_result.rewards == {"reward": 0.0}

    # Logs came straight from the bound trial dirs; the provenance note sits beside them.
    trial_dir = tmp_path / "jobs" / "local-backend" / by_task["aces/solves"].trial_name
    paths = TrialPaths(trial_dir=trial_dir)
    assert paths.reward_text_path.read_text().strip() == "1"
    assert (paths.agent_dir / "oracle.txt").exists()
    provenance = json.loads((trial_dir / PROVENANCE_FILE).read_text())
    assert provenance["backend"] == "local" and provenance["from_image"] == "ubuntu:24.04"
    assert provenance["network"] == "off" and provenance["image_used"] is False

    # Every private root was removed and no sandbox process outlived the job.
    assert os.listdir(tmp_path / "roots") == []
    assert processes_matching(str(tmp_path / "roots")) == []


@sync
async def test_backends_unsupported_dockerfile_fails_the_trial_not_the_job(tmp_path):
    dataset = tmp_path / "dataset"
    task = write_task(dataset, "bad-docker", answer="42")
    dockerfile = task / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "USER nobody\n")
    write_task(dataset, "fine", answer="42")
    (tmp_path / "roots").mkdir()

    result = await (await Job.create(_job_config(tmp_path, dataset))).run()

    by_task = {trial.task_name: trial for trial in result.trial_results}
    bad = by_task["aces/bad-docker"]
    assert bad.verifier_result is None
    assert bad.exception_info.exception_type == "BackendError"
    assert f"{dockerfile}:5: USER is not supported by backend=local" in bad.exception_info.exception_message
    assert by_task["aces/fine"].verifier_result.rewards == {"reward": 1.0}
    assert os.listdir(tmp_path / "roots") == []


def test_backends_preflight_reads_the_task_and_its_dockerfile(tmp_path):
    from aces_bench.backends.local import preflight
    from aces_bench.core.errors import BackendError

    task = write_task(tmp_path / "dataset", "ok", answer="42")
    plan = preflight(task)
    assert plan.base_image == "ubuntu:24.04" and plan.workdir == "/workspace"
    (task / "environment" / "Dockerfile").unlink()
    toml = (task / "task.toml").read_text().replace('[environment]\n', '[environment]\ndocker_image = "python:3.12"\n')
    (task / "task.toml").write_text(toml)
    with pytest.raises(BackendError, match=r"task.toml: \[environment\].docker_image = 'python:3.12' is set"):
        preflight(task)


@sync
async def test_backends_without_auto_mounting_harbor_downloads_the_logs(tmp_path):
    dataset = tmp_path / "dataset"
    write_task(dataset, "solves", answer="42")
    (tmp_path / "roots").mkdir()

    result = await (await Job.create(_job_config(tmp_path, dataset, auto_mounting=False))).run()

    (trial,) = result.trial_results
    assert trial.exception_info is None, trial.exception_info
    assert trial.verifier_result.rewards == {"reward": 1.0}
    paths = TrialPaths(trial_dir=tmp_path / "jobs" / "local-backend" / trial.trial_name)
    assert (paths.agent_dir / "oracle.txt").exists() and paths.test_stdout_path.exists()
    assert os.listdir(tmp_path / "roots") == []
