"""Finding 7: the local backend enforces the task's memory and disk limits, or says it did not.

A memory bomb in a trial with ``memory_mb=256`` must be killed, not allowed its
600 MB; a RAM-backed write to the private root counts against the same limit. Where
this host has no writable cgroup the test skips naming why, and the provenance must
then say the limits were not enforced. A write past ``storage_mb`` fails inside
(ENOSPC) while the host's file system is untouched; a root in /dev/shm without
``storage_mb`` is capped at ``memory_mb``. What a SIGKILLed run leaves (cgroups,
tmpfs mounts) is removed by the next one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.backends import make_env, needs_bwrap, started, sync

from aces_bench.backends import limits
from aces_bench.backends.limits import TrialCgroup, TrialDisk
from aces_bench.core.errors import BackendError

pytestmark = [pytest.mark.sandbox, needs_bwrap, pytest.mark.timeout(120)]

BOMB = "python3 -c \"b = bytearray(600 * 1024 * 1024); print('allocated', len(b))\""


def _enforceable() -> bool:
    probe = TrialCgroup.create("aces-limits-probe", memory_mb=64, cpus=None)
    if probe is None:
        return False
    probe.remove()
    return True


@sync
async def test_a_memory_bomb_is_killed_at_the_limit(tmp_path):
    env = make_env(tmp_path, root_parent="/dev/shm")
    env.task_env_config.memory_mb = 256
    if not _enforceable():
        async with started(env) as env:
            assert env.provenance.resource_limits_enforced is False
            assert env.provenance.resource_limits.startswith("not enforced")
        pytest.skip("no writable cgroup (v2 or v1 memory controller) on this host: limits cannot be enforced here")
    async with started(env) as env:
        bomb = await env.exec(BOMB)
        small = await env.exec("python3 -c \"b = bytearray(32 * 1024 * 1024); print('ok')\"")
        prov = env.provenance
        # 600 MB written to the RAM-backed root: charged to the trial, so the write fails
        # or the OOM killer ends the sandbox (as Docker ends an OOM container).
        try:
            shm = await env.exec("head -c 600M /dev/zero > /tmp/fill; echo $?; du -sm /tmp/fill")
            filled = shm.return_code == 0 and (shm.stdout or "").startswith("0\n")
        except BackendError:
            filled = False
    assert prov.resource_limits_enforced is True and "memory 256 MB" in prov.resource_limits
    assert bomb.return_code in (137, -9) and "allocated" not in (bomb.stdout or ""), bomb
    assert small.return_code == 0 and small.stdout.strip() == "ok"
    assert not filled, shm


def _can_mount(tmp_path) -> bool:
    probe = tmp_path / "mount-probe"
    probe.mkdir()
    disk = TrialDisk.mount(probe, 16)
    if disk is not None:
        disk.unmount()
    probe.rmdir()
    return disk is not None


def _size_mb(path) -> float:
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize / 2**20


@sync
async def test_a_write_past_storage_mb_fails_inside_and_spares_the_host(tmp_path):
    env = make_env(tmp_path)
    env.task_env_config.storage_mb = 32
    if not _can_mount(tmp_path):
        async with started(env) as env:
            assert env.provenance.limits["disk"] == "not enforced (32 MB asked)"
        pytest.skip("this process may not mount a tmpfs (no CAP_SYS_ADMIN): the disk limit cannot be enforced here")
    host_before = os.statvfs(tmp_path).f_bfree
    async with started(env) as env:
        root = env.private_root
        fill = await env.exec("head -c 100M /dev/zero > /tmp/fill; echo rc=$?; du -m /tmp/fill")
        host_during = os.statvfs(tmp_path).f_bfree
        size_during = _size_mb(root)
        big = tmp_path / "big"
        big.write_bytes(b"x" * 2**20)
        with pytest.raises(BackendError, match="no space left on the trial.s 32 MB disk"):
            await env.upload_file(big, "/tests/big")  # as Harbor uploads the verifier's tests
        after = await env.exec("rm /tmp/fill && echo small > /workspace/x && cat /workspace/x")
        prov = env.provenance
    assert "No space left on device" in (fill.stderr or ""), fill
    assert "rc=1" in (fill.stdout or "")
    assert int((fill.stdout or "").split()[-2]) <= 32, fill.stdout  # du -m: at most the limit landed
    assert 31 <= size_during <= 33  # the private root is the 32 MB tmpfs, not the host's disk
    # The host file system did not take the 100 MB (other jobs may write a little meanwhile).
    assert (host_before - host_during) * os.statvfs(tmp_path).f_frsize < 16 * 2**20
    assert after.return_code == 0 and after.stdout.strip() == "small"  # the trial goes on after the error
    assert prov.limits["disk"].startswith("32 MB (tmpfs"), prov.limits
    assert not root.exists()  # unmounted and removed at stop
    assert not [m for m in limits._mounts() if m[0] == str(root)]


@sync
async def test_a_root_in_dev_shm_is_capped_at_memory_mb(tmp_path):
    if not _can_mount(tmp_path):
        pytest.skip("this process may not mount a tmpfs (no CAP_SYS_ADMIN)")
    env = make_env(tmp_path, root_parent="/dev/shm")
    env.task_env_config.memory_mb = 128
    async with started(env) as env:
        size = _size_mb(env.private_root)
        disk = env.provenance.limits["disk"]
    assert 127 <= size <= 129, size
    assert disk.startswith("128 MB (tmpfs capped at memory_mb"), disk


@sync
async def test_an_unenforceable_disk_limit_is_refused_with_require_limits(tmp_path, monkeypatch):
    # The host condition (no CAP_SYS_ADMIN) is simulated: a root process can always mount.
    monkeypatch.setattr(TrialDisk, "mount", classmethod(lambda cls, path, size: None))
    env = make_env(tmp_path, require_limits=True)
    env.task_env_config.storage_mb = 64
    with pytest.raises(BackendError, match="storage_mb=64 cannot be enforced"):
        await env.start(force_build=False)
    assert not list(tmp_path.glob("aces-sandbox-*"))


_KILLED_RUN = """
import asyncio, sys
sys.path.insert(0, {tests!r})
from support.backends import make_env
from pathlib import Path

async def main():
    env = make_env(Path({tmp!r}))
    env.task_env_config.memory_mb, env.task_env_config.storage_mb = 256, 32
    await env.start(force_build=False)
    print(env.private_root, env._cgroup.dirs[0] if env._cgroup else "", flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def test_what_a_sigkilled_run_leaves_is_swept_by_the_next(tmp_path):
    if not _can_mount(tmp_path) or not _enforceable():
        pytest.skip("needs a writable cgroup and CAP_SYS_ADMIN to leave anything behind")
    tests = str(Path(__file__).resolve().parents[1])  # the subprocess imports support.backends from tests/
    script = _KILLED_RUN.format(tests=tests, tmp=str(tmp_path / "run"))
    (tmp_path / "run").mkdir()
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        root, cgroup = proc.stdout.readline().split()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10  # bwrap dies with its parent; its cgroup empties
    while Path(cgroup, "cgroup.procs").read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert Path(cgroup).is_dir() and any(m[0] == root for m in limits._mounts()), "nothing was left to sweep"
    mounts, cgroups = limits.sweep_stale.__wrapped__()
    assert mounts >= 1 and cgroups >= 1
    assert not Path(cgroup).exists()
    assert not any(m[0] == root for m in limits._mounts())


@sync
async def test_a_dockerfile_copy_larger_than_storage_mb_is_a_clear_error(tmp_path):
    if not _can_mount(tmp_path):
        pytest.skip("this process may not mount a tmpfs (no CAP_SYS_ADMIN)")
    env = make_env(tmp_path)
    (tmp_path / "task" / "environment" / "workspace" / "big.bin").write_bytes(b"x" * 20 * 2**20)
    env.task_env_config.storage_mb = 16
    with pytest.raises(BackendError, match="no space left on the trial's 16 MB disk") as err:
        await env.start(force_build=False)
    assert "Dockerfile:" in str(err.value) and "workspace.storage_mb" in str(err.value)
    assert not list(tmp_path.glob("aces-sandbox-*"))  # unmounted and removed


def _tree_mb(path: Path) -> float:
    return sum(p.lstat().st_size for p in Path(path).rglob("*") if p.is_file()) / 2**20


def _capped_env(tmp_path, storage_mb: int):
    """A trial env with a ``storage_mb`` disk (skips where no tmpfs can be mounted)."""
    if not _can_mount(tmp_path):
        pytest.skip("this process may not mount a tmpfs (no CAP_SYS_ADMIN): the disk limit cannot be enforced here")
    env = make_env(tmp_path)
    env.task_env_config.storage_mb = storage_mb
    return env


@sync
async def test_a_write_past_storage_mb_into_logs_fails_inside_and_the_host_folder_stays_under_it(tmp_path):
    # /logs/artifacts is where a skill script is told to leave its files: were it a bind
    # of the host's trial folder, 100 MB would land on the host past a 32 MB limit.
    env = _capped_env(tmp_path, 32)
    trial = env.trial_paths
    async with started(env) as env:
        fill = await env.exec("head -c 100M /dev/zero > /logs/artifacts/fill; echo rc=$?")
        verifier_mounted = env.is_path_mounted("/logs/verifier", trial.verifier_dir)
        await env.exec("rm /logs/artifacts/fill; head -c 8M /dev/zero > /logs/artifacts/kept; "
                       "echo 1 > /logs/verifier/reward.txt; mkfifo /logs/artifacts/pipe; "
                       "ln -s /etc/passwd /logs/agent/out; cp /usr/bin/id /logs/artifacts/x; chmod 4755 /logs/artifacts/x")
        # As Harbor does for a non-mounted dir after the verifier: the reward is read from the host.
        await env.download_dir("/logs/verifier", trial.verifier_dir)
        reward = (trial.verifier_dir / "reward.txt").read_text()
        prov = env.provenance
    assert "No space left on device" in (fill.stderr or "") and "rc=1" in (fill.stdout or ""), fill
    assert verifier_mounted is False  # Harbor downloads it instead of reading a host bind
    assert reward.strip() == "1"
    host_logs = [trial.agent_dir, trial.verifier_dir, trial.artifacts_dir]
    assert sum(_tree_mb(d) for d in host_logs) <= 32
    kept = list(trial.artifacts_dir.rglob("kept"))  # copied out at stop, under Harbor's artifacts path
    assert kept and kept[0].stat().st_size == 8 * 2**20
    assert not list(trial.trial_dir.rglob("pipe")) and not (trial.agent_dir / "out").exists()
    setuid = [p for p in trial.trial_dir.rglob("*") if p.lstat().st_mode & 0o6000]
    assert not setuid, setuid
    assert prov.limits["disk"] == "32 MB (tmpfs; /logs inside it, copied out)", prov.limits


@sync
async def test_logs_copied_out_over_a_run_are_held_to_storage_mb_and_the_trial_errors(tmp_path):
    # Deleting a file inside after Harbor downloaded it frees the tmpfs, not the host:
    # what all copy-outs leave on the host is held to the limit, and the trial says why.
    # (Files under the 16 MB per-file copy cap, so only the disk budget decides.)
    env = _capped_env(tmp_path, 32)
    trial = env.trial_paths
    await env.start(force_build=False)
    try:
        await env.exec("head -c 14M /dev/zero > /logs/agent/a")
        await env.download_dir("/logs/agent", trial.agent_dir)  # after the agent phase
        await env.download_dir("/logs/agent", trial.agent_dir)  # again: the same file is not counted twice
        await env.exec("rm /logs/agent/a; head -c 14M /dev/zero > /logs/artifacts/b; "
                       "head -c 14M /dev/zero > /logs/artifacts/c")
    finally:
        with pytest.raises(BackendError, match="more to /logs than its 32 MB disk limit") as err:
            await env.stop(delete=True)
    assert _tree_mb(trial.agent_dir) + _tree_mb(trial.artifacts_dir) <= 32
    assert (trial.agent_dir / "a").stat().st_size == 14 * 2**20
    assert "/c" in str(err.value) and "workspace.storage_mb" in str(err.value)
    assert not env.private_root.exists()  # torn down before the error is raised


def test_copy_out_copies_plain_data_only_and_keeps_host_files_when_asked(tmp_path):
    from aces_bench.backends.copyout import CopyBudget, copy_out

    src, dst = tmp_path / "inside", tmp_path / "host"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "data").write_bytes(b"x" * 1000)
    (src / "kept").write_text("from the sandbox")
    (src / "etc").symlink_to("/etc")  # a dir link out: neither followed nor left
    os.mkfifo(src / "pipe")
    dst.mkdir()
    (dst / "kept").write_text("Harbor's")
    over = copy_out(src, dst, replace=False, budget=CopyBudget(500))
    assert over == [str(dst / "sub" / "data")]  # 1000 bytes past a 500-byte budget: not copied
    assert (dst / "kept").read_text() == "Harbor's"
    assert sorted(p.name for p in dst.rglob("*")) == ["kept", "sub"]
