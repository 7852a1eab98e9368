"""Finding 7: the local backend enforces the task's memory limit (cgroup), or says it did not.

A memory bomb in a trial with ``memory_mb=256`` must be killed, not allowed its
600 MB; a RAM-backed write to the private root counts against the same limit. Where
this host has no writable cgroup the test skips naming why, and the provenance must
then say the limits were not enforced.
"""

from __future__ import annotations

import pytest
import security_support  # noqa: F401  (puts the harness helpers on sys.path)

from aces_bench.backends.limits import TrialCgroup
from aces_bench.errors import BackendError

from backends_support import make_env, needs_bwrap, started, sync  # isort: skip

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
