"""Finding 1: the host's environment must not reach any process inside the sandbox.

A canary exported on the host is looked for in every process of the sandbox's PID
namespace (as the host reads their /proc/<pid>/environ, PID 1 and entered commands
alike), in what a command inside can read, and -- after a whole study whose skill
dumps /proc/*/environ, env and ~/.aws -- in every file under the output folder.
"""

from __future__ import annotations

import pytest
from security_support import CANARIES, HOSTILE_SKILL, environ_of, files_containing

from backends_support import make_env, processes_in_namespace, started, sync  # isort: skip
from harness_support import needs_bwrap, run_cli, study_overrides  # isort: skip

pytestmark = [pytest.mark.timeout(180)]


@needs_bwrap
@sync
async def test_no_host_variable_in_any_sandbox_process(tmp_path, monkeypatch):
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    async with started(make_env(tmp_path)) as env:
        # A background job keeps an entered command alive while the host looks at it.
        await env.exec("nohup sleep 30 >/dev/null 2>&1 &")
        inside = await env.exec(
            "for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; env; cat ~/.aws/* 2>/dev/null; true"
        )
        pids = processes_in_namespace(env.sandbox.pid_namespace)
        environs = {pid: environ_of(pid) for pid in pids}
        init = env.sandbox.pid
    assert init in pids and len(pids) >= 3, pids  # init, payload, sleep
    for pid, text in environs.items():
        for name, value in CANARIES.items():
            assert value.encode() not in text, f"{name} is in the environment of sandbox pid {pid}"
            assert f"{name}=".encode() not in text, f"{name} is set in sandbox pid {pid}"
    out = inside.stdout or ""
    assert "PATH=" in out and "HOME=/root" in out  # the probe did read environments
    assert not [v for v in CANARIES.values() if v in out]


@needs_bwrap
def test_canary_reaches_no_file_of_a_study(tmp_path, monkeypatch):
    """The issue's check: a study whose skill dumps every environment it can read."""
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)  # run_cli passes os.environ on to the study
    out = tmp_path / "out"
    proc = run_cli("harness=reference", f"output_dir={out}",
                   *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp_path), timeout=170)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    trajectories = list(out.glob("jobs/*/*/agent/trajectory.json"))
    assert len(trajectories) == 2  # with the skill and the baseline
    dumped = [t for t in trajectories if "/proc/1/environ" in t.read_text()]
    assert dumped, "the hostile script never ran; the test would prove nothing"
    assert files_containing(out, list(CANARIES.values())) == []
    assert not [v for v in CANARIES.values() if v in proc.stdout + proc.stderr]
