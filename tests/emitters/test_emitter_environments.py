"""A skill's own environment (Dockerfile base, Compose sidecars, MCP servers) and
bring-your-own Harbor tasks under evals/harbor/."""

from __future__ import annotations

import asyncio
import os
import shutil
import tomllib
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser
from harbor.models.task.task import Task
from support.emitters import copy_skill, custom_env, native_task

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import BackendError, EmitError
from aces_bench.emitters import emit_study
from aces_bench.emitters.emit import read_task_metadata

SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"


def _emit(skill: Path, tmp_path: Path, *extra: str):
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", *extra], output_dir=tmp_path)
    return emit_study(spec, tmp_path / "tasks")


def _structure(task_path: Path) -> list[tuple[str, str]]:
    parser = DockerfileParser(path=str(task_path / "environment" / "Dockerfile"))
    return [(i["instruction"], i["value"]) for i in parser.structure]


def test_custom_dockerfile_is_the_base_and_the_staging_layers_come_last(tmp_path):
    skill = copy_skill(tmp_path)
    custom_env(skill, "FROM python:3.12-slim\nENV TZ=UTC\nCOPY requirements.txt /opt/requirements.txt\n"
                       "RUN mkdir -p /opt/tools\n")
    result = _emit(skill, tmp_path, "workspace.base_image=ignored:1")
    for t in result.tasks:
        assert _structure(t.path) == [
            ("FROM", "python:3.12-slim"),
            ("ENV", "TZ=UTC"),
            ("COPY", "requirements.txt /opt/requirements.txt"),
            ("RUN", "mkdir -p /opt/tools"),
            ("WORKDIR", "/workspace"),
            ("COPY", "skills/ /skills/"),
            ("COPY", "workspace/ /workspace/"),
        ]
        assert (t.path / "environment" / "requirements.txt").is_file()  # its build context
        meta = read_task_metadata(t.path)["environment"]
        assert meta["source"] == "evals/environment" and meta["custom_dockerfile"] is True
        assert len(meta["content_hash"]) == 64
    # The default backend (local) replayed it without complaint; the pair shares it byte for byte.
    texts = {(t.path / "environment" / "Dockerfile").read_text() for t in result.tasks}
    assert len(texts) == 1


def test_local_backend_refuses_a_custom_dockerfile_it_cannot_honour_before_any_trial(tmp_path):
    skill = copy_skill(tmp_path)
    custom_env(skill, "FROM python:3.12-slim\nUSER nobody\n")
    with pytest.raises(BackendError) as err:
        _emit(skill, tmp_path)
    assert "Dockerfile:2" in str(err.value) and "USER" in str(err.value)
    _emit(skill, tmp_path / "docker", "backend=docker")  # Docker honours it


def test_compose_sidecar_and_mcp_servers_reach_the_task(tmp_path):
    skill = copy_skill(tmp_path)
    env = custom_env(skill, "FROM python:3.12-slim\n")
    (env / "docker-compose.yaml").write_text(
        "services:\n  mcp-mock:\n    image: python:3.12-slim\n"
        "    command: python3 -m http.server 8000\n"
    )
    (env / "mcp_servers.yaml").write_text(
        "- name: mock-crm\n  transport: streamable-http\n  url: http://mcp-mock:8000/mcp\n"
        "- name: local-tools\n  transport: stdio\n  command: python3\n  args: [/opt/tools/server.py]\n"
    )
    result = _emit(skill, tmp_path, "backend=docker")
    for t in result.tasks:
        assert (t.path / "environment" / "docker-compose.yaml").is_file()
        assert not (t.path / "environment" / "mcp_servers.yaml").exists()  # declarations go to task.toml
        config = tomllib.loads((t.path / "task.toml").read_text())
        servers = config["environment"]["mcp_servers"]
        assert [(s["name"], s["transport"]) for s in servers] == [("mock-crm", "streamable-http"), ("local-tools", "stdio")]
        assert servers[0]["url"] == "http://mcp-mock:8000/mcp" and servers[1]["args"] == ["/opt/tools/server.py"]
        assert Task(t.path).config.environment.mcp_servers[0].name == "mock-crm"
        meta = read_task_metadata(t.path)["environment"]
        assert meta["compose"] is True and meta["mcp_servers"] == ["local-tools", "mock-crm"]
    # backend=local runs one sandbox per trial: it says so before any trial starts.
    with pytest.raises(BackendError) as err:
        _emit(skill, tmp_path / "local")
    assert "Docker Compose environments are not supported by backend=local" in str(err.value)
    assert "backend=docker" in str(err.value)


def test_malformed_mcp_declaration_names_the_file_and_entry(tmp_path):
    skill = copy_skill(tmp_path)
    env = custom_env(skill, "FROM python:3.12-slim\n")
    (env / "mcp_servers.json").write_text('[{"name": "crm", "transport": "sse"}]')
    with pytest.raises(EmitError) as err:
        _emit(skill, tmp_path, "backend=docker")
    assert "mcp_servers.json" in str(err.value)
    assert "'url' is required for transport 'sse'" in str(err.value)


def test_custom_environment_can_be_turned_off(tmp_path):
    skill = copy_skill(tmp_path)
    custom_env(skill, "FROM python:3.12-slim\nUSER nobody\n")
    result = _emit(skill, tmp_path, "workspace.custom_environment=false")
    assert _structure(result.tasks[0].path)[0] == ("FROM", "python:3.12-slim")
    assert read_task_metadata(result.tasks[0].path)["environment"]["source"] == "default"


def test_native_harbor_task_is_paired_with_and_without_the_skill(tmp_path):
    skill = copy_skill(tmp_path)
    native_task(skill)
    result = _emit(skill, tmp_path)
    native = [t for t in result.tasks if t.case_id == "harbor-fix-total"]
    assert sorted(t.condition for t in native) == ["baseline", "with_skill"]
    assert len(result.tasks) == 6  # the two generated cases are still there
    for t in native:
        task = Task(t.path)
        assert task.config.environment.skills_dir == "/skills"  # set because the author left it out
        assert task.config.environment.workdir == "/app"
        assert task.config.task.name == f"aces/{t.task_id}"
        assert task.instruction == "Write the sum of 2 and 3 to /app/answer.txt.\n"  # the author's, untouched
        assert _structure(t.path) == [("FROM", "python:3.12-slim"), ("WORKDIR", "/app"), ("COPY", "skills/ /skills/")]
        staged = sorted(p.name for p in (t.path / "environment" / "skills").iterdir())
        assert staged == (["csv-column-sum"] if t.condition == "with_skill" else [])
        assert os.access(t.path / "tests" / "helper.py", os.X_OK)  # author's modes kept
        meta = read_task_metadata(t.path)
        assert meta["case_source"] == "native_harbor_task"
        assert meta["environment"]["source"] == "evals/harbor/fix-total"
        assert meta["expected_skill"] == "csv-column-sum" and meta["workdir"] == "/app"
        assert meta["skill_hash"] == ("" if t.condition == "baseline" else meta["staged_skills"][0]["content_hash"])


def test_native_task_built_from_an_image_gets_a_dockerfile_from_it(tmp_path):
    skill = copy_skill(tmp_path)
    native_task(skill, dockerfile=False, toml_extra='docker_image = "ghcr.io/acme/tools:1"\nskills_dir = "/opt/skills"\n')
    result = _emit(skill, tmp_path, "backend=docker", "skill.cases=[harbor-fix-total]")
    for t in result.tasks:
        assert _structure(t.path) == [("FROM", "ghcr.io/acme/tools:1"), ("COPY", "skills/ /opt/skills/")]
        config = Task(t.path).config.environment
        assert config.docker_image is None and config.skills_dir == "/opt/skills"  # the author's skills dir wins


def test_native_task_harbor_cannot_load_is_refused_by_name(tmp_path):
    skill = copy_skill(tmp_path)
    task = native_task(skill)
    (task / "tests" / "test.sh").unlink()
    with pytest.raises(EmitError) as err:
        _emit(skill, tmp_path)
    assert "evals/harbor/fix-total" in str(err.value) and "native Harbor task does not load" in str(err.value)


@pytest.mark.sandbox
def test_native_task_pair_runs_on_the_local_backend(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    from aces_bench.run.collect import collect_job
    from aces_bench.run.runner import run_job

    skill = copy_skill(tmp_path)
    native_task(skill)
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.cases=[harbor-fix-total]"], output_dir=tmp_path)
    emitted = emit_study(spec, tmp_path / "tasks")
    job_dir = asyncio.run(run_job(spec, emitted, tmp_path / "jobs"))
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, emitted.plan.tasks, strict=True)}
    records = collect_job(job_dir, plans, 1)
    assert sorted(r.plan.condition for r in records) == ["baseline", "with_skill"]
    # The author's verifier decided both rewards (the reference agent does not write 5).
    assert all(r.status == "ok" and r.reward == 0.0 for r in records), [(r.status, r.failure_cause) for r in records]
