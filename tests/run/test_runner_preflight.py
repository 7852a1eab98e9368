"""backend=docker refuses to start without a reachable engine, before any trial."""

from __future__ import annotations

import pytest

from aces_bench.core.errors import BackendError
from aces_bench.study.preflight import preflight_docker


def _stub_docker(tmp_path, body: str) -> str:
    stub = tmp_path / "docker"
    stub.write_text(f"#!/bin/sh\n{body}\n")
    stub.chmod(0o755)
    return str(tmp_path)


def test_unreachable_engine_is_refused_with_dockers_own_words(tmp_path, monkeypatch):
    # A stand-in client that answers like the real one does without a daemon.
    monkeypatch.setenv("PATH", _stub_docker(tmp_path, "echo 'Cannot connect to the Docker daemon.' >&2; exit 1"))
    with pytest.raises(BackendError) as err:
        preflight_docker()
    assert "no Docker engine is reachable: Cannot connect to the Docker daemon." in str(err.value)
    assert "backend=local" in str(err.value)


def test_missing_client_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BackendError) as err:
        preflight_docker()
    assert "the docker command is not installed" in str(err.value)


def test_reachable_engine_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _stub_docker(tmp_path, "echo 28.2.2"))
    preflight_docker()


def test_missing_model_key_names_the_variable(tmp_path, monkeypatch):
    from aces_bench.config.compose import compose_spec
    from aces_bench.core.errors import ConfigError
    from aces_bench.study.preflight import preflight_model_key

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o"], output_dir=tmp_path)
    with pytest.raises(ConfigError) as err:
        preflight_model_key(spec)
    assert "model.api_key_env names OPENAI_API_KEY, which is not set" in str(err.value)
    assert "export OPENAI_API_KEY=<key>" in str(err.value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    preflight_model_key(spec)
    preflight_model_key(compose_spec([], output_dir=tmp_path))  # the reference agent needs no key


def test_a_half_written_job_result_is_removed_before_resume(tmp_path):
    from aces_bench.run.runner import discard_half_written

    assert discard_half_written(tmp_path) is False  # nothing there: nothing to do
    (tmp_path / "result.json").write_text("")  # a run killed while Harbor wrote it
    assert discard_half_written(tmp_path) is True
    assert not (tmp_path / "result.json").exists()
    (tmp_path / "result.json").write_text('{"id": "x", "started_at"')
    assert discard_half_written(tmp_path) is True
