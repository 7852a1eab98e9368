"""Bad input found in the acceptance review: each stops with one error/fix message, exit 2.

Every case runs the real ``aces-bench`` entry point in-process (Hydra, Harbor and the
scanner are real); the assertions are on the exact user-facing text.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from aces_bench import cli

EXAMPLE_SKILL = Path(cli.__file__).resolve().parent / "examples" / "skills" / "invoice-reconciler"


def run(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of ``aces-bench argv`` (a study's own errors exit through SystemExit)."""
    try:
        rc = cli.main(argv)
    except SystemExit as exc:
        rc = exc.code
    return rc, capsys.readouterr().err


@pytest.fixture(autouse=True)
def _plain_env(monkeypatch, tmp_path):
    # A developer's HYDRA_FULL_ERROR asks for Hydra's tracebacks; these tests check the user's view.
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    monkeypatch.setenv("HARBOR_TELEMETRY", "0")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("argv", "head", "fix"),
    [
        (["harness.agnet=x"], "error: harness.agnet: unknown key: Key 'agnet' not in 'HarnessConf'",
         "fix: valid keys here: name, agent, import_path, kwargs, env, requires_model, label"),
        (["foo=bar"], "error: foo: unknown key", "fix: valid keys here: skill, harness, model"),
        (["harness=nope"], "error: harness=nope: no option 'nope' in config group 'harness'",
         "fix: choose one of: claude-code, codex, harbor, opencode, reference, terminus-2"),
        (["-m", "harness=nope,reference"], "error: harness=nope: no option 'nope' in config group 'harness'",
         "fix: choose one of:"),
        (["hydra/launcher=nope"], "error: hydra/launcher=nope: no option 'nope'", "local_parallel"),
        (["study.n_attempts=abc"], "error: study.n_attempts: Value 'abc' of type 'str' could not be converted",
         "fix: give a value of the key's type"),
        (["skill.paths=/x"], "error: skill.paths: expects a list", "fix: write a list, quoted for the shell"),
        (["skill.paths=["], "error: skill.paths=[: cannot parse the override", "'skill.paths=[/a,/b]'"),
        (["grading.weights.nope=1"], "error: grading.weights.nope: unknown key",
         "fix: add a new entry with +grading.weights.nope=<value>"),
        (["--cfg", "job", "harness.agnet=1"], "error: harness.agnet: unknown key", "fix: valid keys here"),
    ],
)
def test_compose_errors_are_one_message_exit_2(argv, head, fix, capsys):
    rc, err = run(argv, capsys)
    assert rc == 2
    assert err.startswith(head), err
    assert fix in err
    assert "Traceback" not in err and "HYDRA_FULL_ERROR" not in err
    assert len(err.strip().splitlines()) == 2


def test_hydra_full_error_still_gives_hydras_traceback(monkeypatch):
    from hydra.errors import ConfigCompositionException

    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")
    with pytest.raises(ConfigCompositionException):
        cli.main(["harness.agnet=x"])


def test_backend_refusing_the_network_policy_is_a_config_error(tmp_path, capsys, monkeypatch):
    # Harbor's docker environment cannot enforce no-network without its egress control
    # (absent here): every trial is refused when it is built, and the job used to end
    # in an ExceptionGroup traceback.
    skill = tmp_path / "skills" / "invoice-reconciler"
    shutil.copytree(EXAMPLE_SKILL, skill)
    # The engine check runs first and there is no engine here: a client that reports
    # one lets the run reach Harbor's own refusal of the network policy.
    real = shutil.which("docker") or "false"
    stub = tmp_path / "bin" / "docker"
    stub.parent.mkdir()
    stub.write_text(f'#!/bin/sh\n[ "$1" = info ] && {{ echo 28.2.2; exit 0; }}\nexec {real} "$@"\n')
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub.parent}{os.pathsep}{os.environ['PATH']}")
    rc, err = run(["backend=docker", "skill=custom", f"skill.paths=[{skill}]", "skill.cases=[explicit-1]",
                   f"output_dir={tmp_path / 'out'}"], capsys)
    if rc == 0:
        pytest.skip("this host's docker environment enforces no-network: nothing to refuse")
    assert rc == 2
    assert "error: backend=docker: the docker environment refused the task: network_mode='no-network'" in err
    assert "fix: set workspace.network=public" in err
    assert "Traceback" not in err


def test_scan_out_that_is_a_file(tmp_path, capsys):
    not_a_dir = tmp_path / "report.txt"
    not_a_dir.write_text("x")
    rc, err = run(["scan", str(EXAMPLE_SKILL), "--out", str(not_a_dir / "sub"), "--quiet"], capsys)
    assert rc == 2
    assert err.strip().splitlines() == [
        f"error: --out {not_a_dir / 'sub'}: {not_a_dir} is a file, so the output folder cannot be created",
        "  fix: give a folder path (it is created if missing)",
    ]
