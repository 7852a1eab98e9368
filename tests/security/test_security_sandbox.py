"""The local sandbox's boundary, attacked one protection at a time from inside a real sandbox.

Each test starts a real ``LocalSandboxEnvironment`` (bubblewrap), does from inside what
a hostile skill would, and checks the host: a fork bomb stops at the process limit, a
FIFO, socket, device attempt or link at every path the host copies never blocks or
escapes, a daemon does not outlive the agent into a shared verifier, a root-only host
file stays unreadable, and a host that cannot give a protection says so (or refuses
with ``require_isolation``).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import uuid
from pathlib import Path

import pytest
from support.backends import make_env, processes_in_namespace, started, sync

from aces_bench.backends import bwrap, seccomp
from aces_bench.backends.local import PROVENANCE_FILE
from aces_bench.core.errors import BackendError

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(180)]


@sync
async def test_every_entered_command_is_unprivileged_filtered_and_mapped(tmp_path):
    async with started(make_env(tmp_path)) as env:
        out = await env.exec("grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status; "
                             "cat /proc/self/uid_map; id -u")
        bg = await env.exec("sleep 30 & sleep 0.2; grep -E '^(CapEff|Seccomp):' /proc/$!/status")
        prov = env.provenance
    lines = out.stdout.splitlines()
    assert "CapEff:\t0000000000000000" in lines and "CapBnd:\t0000000000000000" in lines
    assert "CapAmb:\t0000000000000000" in lines and "CapPrm:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines and "Seccomp:\t2" in lines
    inside, outside, count = lines[-2].split()
    assert (inside, outside, count) == ("0", str(bwrap.SANDBOX_ID_BASE), str(bwrap.SANDBOX_ID_COUNT))
    assert lines[-1] == "0"  # root inside ...
    assert bg.stdout.split() == ["CapEff:", "0000000000000000", "Seccomp:", "2"]  # ... and what it starts
    assert prov.missing_protections == {} and prov.security_note.startswith("a boundary")
    assert prov.limits["processes"].startswith(f"{bwrap.DEFAULT_PIDS_LIMIT} (cgroup")


@sync
async def test_a_fork_bomb_stops_at_the_process_limit(tmp_path):
    bomb = ("import os, time\nn = 0\nwhile n < 5000:\n    try:\n        pid = os.fork()\n    except OSError:\n"
            "        break\n    if pid == 0:\n        time.sleep(30); os._exit(0)\n    n += 1\nprint(n)\n")
    async with started(make_env(tmp_path, pids_limit=64)) as env:
        out = await env.exec(f"python3 -c '{bomb}'", timeout_sec=60)
        after = await env.exec("echo alive")
        namespace = env.sandbox.pid_namespace
    forked = int(out.stdout.strip())
    assert 0 < forked < 64, out
    assert after.stdout == "alive\n"  # the limit is per trial: the sandbox itself goes on
    assert processes_in_namespace(namespace) == []


@sync
async def test_special_files_and_links_at_every_copied_path_never_block_or_escape(tmp_path):
    env = make_env(tmp_path)
    trial = env.trial_paths
    plant = ("python3 -c \"import os, socket\n"
             "for d in ('/logs/agent', '/logs/verifier', '/logs/artifacts', '/workspace'):\n"
             "    os.makedirs(d, exist_ok=True)\n"
             "    for n in ('trajectory.json', 'reward.json', 'answer.txt'):\n"
             "        p = os.path.join(d, n)\n"
             "        os.path.lexists(p) and os.unlink(p)\n"
             "        os.mkfifo(p)\n"
             "    s = socket.socket(socket.AF_UNIX); s.bind(os.path.join(d, 'sock'))\n"
             "    os.symlink('/etc/shadow', os.path.join(d, 'shadow'))\n"
             "    os.symlink('/', os.path.join(d, 'root'))\n"
             "    open(os.path.join(d, 'big'), 'wb').write(b'x' * (17 * 2**20))\n"
             "    try: os.mknod(os.path.join(d, 'null'), 0o20666, os.makedev(1, 3))\n"
             "    except OSError: pass\n\"")
    async with started(env) as env:
        made = await env.exec(plant)
        assert made.return_code == 0, made
        copies = [env.download_dir("/logs/agent", trial.agent_dir),
                  env.download_dir("/logs/verifier", trial.verifier_dir),
                  env.download_dir("/logs/artifacts", trial.artifacts_dir / "logs" / "artifacts"),
                  env.download_dir("/workspace", trial.artifacts_dir / "workspace")]
        # Bounded: a FIFO opened blocking would hang here for good.
        await asyncio.wait_for(asyncio.gather(*copies), timeout=30)
        with pytest.raises(BackendError, match="not a regular file"):
            await asyncio.wait_for(env.download_file("/logs/agent/trajectory.json", tmp_path / "t.json"), 10)
    bad = []
    for dirpath, dirnames, filenames in os.walk(trial.trial_dir):
        for name in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, name))
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                bad.append(os.path.join(dirpath, name))
    assert bad == []
    big = trial.agent_dir / "big"
    assert big.stat().st_size == 16 * 2**20  # cut at the per-file cap
    record = json.loads((trial.trial_dir / PROVENANCE_FILE).read_text())["copy_out"]
    assert record["n_truncated"] >= 4 and any(t["path"] == str(big.resolve()) for t in record["truncated"])
    kinds = {s["why"] for s in record["skipped"]}
    assert {"a FIFO", "a socket"} <= kinds, kinds


@sync
async def test_a_shared_verifier_starts_after_every_agent_process_ended(tmp_path):
    """Harbor's shared verifier (a native task's default): the /tests upload restarts the sandbox."""
    tests = tmp_path / "tests-src"
    tests.mkdir()
    (tests / "test.sh").write_text("#!/bin/sh\necho ok\n")
    env = make_env(tmp_path)
    async with started(env) as env:
        await env.exec("mkdir -p /tests && echo 'import os' > /tests/sitecustomize.py; "
                       "(setsid sh -c 'while true; do echo 1 > /logs/verifier/reward.txt; sleep 0.05; done' "
                       "</dev/null >/dev/null 2>&1 &); echo planted > ~/.bashrc")
        agent_pids = processes_in_namespace(env.sandbox.pid_namespace)
        assert len(agent_pids) >= 3  # init, payload, the daemon
        await env.exec("rm -f /logs/verifier/reward.txt")  # as Harbor's verifier does first
        await env.upload_dir(tests, "/tests")
        await asyncio.sleep(0.3)
        left = [pid for pid in agent_pids if os.path.exists(f"/proc/{pid}")]
        listing = await env.exec("ls -A /tests; ls /logs/verifier; echo HOME=$HOME; ls -A $HOME")
        prov = json.loads((env.trial_paths.trial_dir / PROVENANCE_FILE).read_text())
    assert left == [], "an agent process outlived the start of verification"
    names = listing.stdout.split()
    assert "sitecustomize.py" not in names and "test.sh" in names
    assert "reward.txt" not in names  # the daemon died before it could write again
    assert "HOME=/aces-verifier-home" in names and ".bashrc" not in names
    assert prov["verifier"].startswith("shared sandbox restarted")


@sync
async def test_a_reward_the_agent_wrote_before_the_restart_is_gone(tmp_path):
    """Harbor removes the reward files, then uploads /tests (the restart): a daemon of
    the agent can write reward.txt in between, and a test.sh that then fails to write
    its own would leave the agent's as the grade. The restart removes them again."""
    tests = tmp_path / "tests-src"
    tests.mkdir()
    (tests / "test.sh").write_text("#!/bin/sh\nexit 1\n")
    env = make_env(tmp_path)
    async with started(env) as env:
        await env.exec("echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json")
        await env.upload_dir(tests, "/tests")  # no rm first: the daemon won the race
        listing = await env.exec("ls -A /logs/verifier")
    names = (listing.stdout or "").split()
    assert "reward.txt" not in names and "reward.json" not in names, names


@pytest.fixture
def root_only_etc_file():
    """A 0640 root:root file under the host's /etc, as a database config would be."""
    if os.geteuid() != 0:
        pytest.skip("making a root-only file under /etc needs root")
    path = Path(f"/etc/aces-probe-{uuid.uuid4().hex[:8]}.conf")
    path.write_text("password=canary-etc-5f1d\n")
    os.chmod(path, 0o640)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


@sync
async def test_a_root_only_host_file_under_etc_is_unreadable(tmp_path, root_only_etc_file):
    async with started(make_env(tmp_path)) as env:
        seen = await env.exec(f"cat {root_only_etc_file}; ls -l {root_only_etc_file}")
    assert "canary-etc" not in (seen.stdout or "") and "Permission denied" in (seen.stderr or ""), seen


def _without_seccomp(monkeypatch):
    monkeypatch.setattr(seccomp, "installer", lambda: None)


@sync
async def test_a_missing_protection_is_recorded_and_the_note_says_so(tmp_path, monkeypatch):
    _without_seccomp(monkeypatch)
    async with started(make_env(tmp_path)) as env:
        status = await env.exec("grep Seccomp: /proc/self/status")
        prov = env.provenance
    assert status.stdout.split() == ["Seccomp:", "0"]  # really off: the record is not decorative
    assert "seccomp" in prov.missing_protections and "libseccomp" in prov.missing_protections["seccomp"]
    assert prov.security_note.startswith("isolation for honest workloads, not a security boundary")
    assert prov.limits["isolation"] == "missing: seccomp"


@sync
async def test_require_isolation_refuses_a_host_missing_a_protection(tmp_path, monkeypatch):
    _without_seccomp(monkeypatch)
    env = make_env(tmp_path, require_isolation=True)
    with pytest.raises(BackendError, match="seccomp") as err:
        await env.start(force_build=False)
    assert "require_isolation" in str(err.value)
    assert not list(tmp_path.glob("aces-sandbox-*"))  # nothing left behind


def test_the_filter_refuses_what_the_module_says(tmp_path):
    """The BPF program itself, applied to a host child: mount and a new user namespace refused."""
    import subprocess

    installer = seccomp.installer()
    if installer is None:
        pytest.skip("libseccomp is not available here")
    done = subprocess.run(["sh", "-c", "unshare -U true; echo userns=$?; grep Seccomp: /proc/self/status"],
                          preexec_fn=installer, capture_output=True, text=True)
    assert "userns=1" in done.stdout and "Seccomp:\t2" in done.stdout, done
