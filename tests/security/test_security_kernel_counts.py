"""Issue 35, items 2 and 8: what a trial holds of the kernel is its own, and it sees nothing of the host.

A hostile skill exhausts each per-user kernel count inside a real sandbox (inotify
instances and watches, POSIX message queues, pipe buffers; keyrings are refused
outright) and holds it while the host, and a second trial running beside it, make the
same kind of object: they must succeed. Each trial has a writable, size-capped
``/dev/shm`` of its own (Python's multiprocessing works in it), and neither ``ps``
(``/proc/*/cmdline``) nor ``mountinfo`` inside names the host path of the private root
or the host pid of aces-bench.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import errno
import fcntl
import os
from pathlib import Path

import pytest
from support.backends import make_env, started, sync

from aces_bench.backends import bwrap

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(300)]

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
IN_MODIFY = 0x2
F_SETPIPE_SZ = 1031

# Inside the trial: take every inotify instance and as many watches as the kernel gives,
# then hold them (the host probes while they are held).
INOTIFY_FLOOD = r"""cat > /tmp/flood.py <<'PY'
import ctypes, os, time
libc = ctypes.CDLL("libc.so.6", use_errno=True)
fds = []
while True:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    fds.append(fd)
watches = 0
for fd in fds[:8]:
    for top in ("/usr", "/etc"):
        for root, dirs, files in os.walk(top):
            for name in dirs + files:
                watches += libc.inotify_add_watch(fd, os.path.join(root, name).encode(), 2) >= 0
print(len(fds), watches, flush=True)
open("/tmp/held", "w").close()
time.sleep(120)
PY
(python3 /tmp/flood.py > /tmp/flood.out 2>&1 &)
for i in $(seq 240); do [ -f /tmp/held ] && break; sleep 0.5; done
cat /tmp/flood.out
"""

MQUEUE_FLOOD = r"""cat > /tmp/mq.py <<'PY'
import ctypes, os, time
rt = ctypes.CDLL("librt.so.1", use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long), ("pad", ctypes.c_long * 4)]
made = 0
for i in range(100000):
    a = Attr(0, 10, 8192, 0)
    if rt.mq_open(f"/flood{i}".encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(a)) < 0:
        break
    made += 1
print(made, ctypes.get_errno(), flush=True)
open("/tmp/held", "w").close()
time.sleep(120)
PY
(python3 /tmp/mq.py > /tmp/mq.out 2>&1 &)
for i in $(seq 120); do [ -f /tmp/held ] && break; sleep 0.5; done
cat /tmp/mq.out
"""

PIPE_FLOOD = r"""cat > /tmp/pipes.py <<'PY'
import fcntl, os, time
pipes = []
for i in range(4000):
    try:
        r, w = os.pipe()
        fcntl.fcntl(w, 1031, 1 << 20)
    except OSError:
        break
    pipes.append((r, w))
print(len(pipes), flush=True)
open("/tmp/held", "w").close()
time.sleep(120)
PY
(python3 /tmp/pipes.py > /tmp/pipes.out 2>&1 &)
for i in $(seq 120); do [ -f /tmp/held ] && break; sleep 0.5; done
cat /tmp/pipes.out
"""


def _host_inotify() -> str:
    """An inotify instance and a watch made by this (host, root) process: 'ok' or the error."""
    fd = _libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        return os.strerror(ctypes.get_errno())
    try:
        if _libc.inotify_add_watch(fd, b"/tmp", IN_MODIFY) < 0:
            return os.strerror(ctypes.get_errno())
        return "ok"
    finally:
        os.close(fd)


@sync
async def test_an_inotify_flood_leaves_the_host_and_a_concurrent_trial_their_own(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with started(make_env(tmp_path / "a")) as flood, started(make_env(tmp_path / "b")) as other:
        if flood.sandbox.owner_uid is None:
            pytest.skip("not a root host: the sandbox's user namespace belongs to the user running aces-bench")
        held = await flood.exec(INOTIFY_FLOOD, timeout_sec=240)
        host = [await asyncio.to_thread(_host_inotify) for _ in range(5)]
        beside = await other.exec("python3 -c \"import ctypes; l = ctypes.CDLL('libc.so.6'); fd = l.inotify_init1(0); "
                                  "print(fd >= 0 and l.inotify_add_watch(fd, b'/tmp', 2) >= 0)\"")
        owners = (flood.sandbox.owner_uid, other.sandbox.owner_uid)
        recorded = flood.provenance.protections["kernel_counts"]
    instances, watches = map(int, held.stdout.split())
    limit = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())
    assert instances >= limit - 1, held  # the flood took all a user may have ...
    assert watches > 1000, held
    assert host == ["ok"] * 5  # ... and host root never felt it
    assert beside.stdout.strip() == "True", beside
    assert owners[0] != owners[1] and min(owners) >= bwrap.OWNER_ID_BASE
    assert recorded.startswith(f"its own: charged to host uid {owners[0]}") and f"inotify instances {limit}" in recorded


@sync
async def test_a_message_queue_flood_leaves_the_host_its_own(tmp_path):
    async with started(make_env(tmp_path)) as env:
        held = await env.exec(MQUEUE_FLOOD, timeout_sec=120)
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        name = f"/aces-host-probe-{os.getpid()}".encode()
        qd = rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
        err = ctypes.get_errno()
    made, why = map(int, held.stdout.split())
    assert why in (errno.EMFILE, errno.ENOMEM, errno.ENOSPC), held  # the trial hit its limit
    assert made < 100000
    try:
        assert qd >= 0, os.strerror(err)
    finally:
        if qd >= 0:
            os.close(qd)
            rt.mq_unlink(name)


@sync
async def test_a_pipe_buffer_flood_leaves_the_host_full_sized_pipes(tmp_path):
    async with started(make_env(tmp_path)) as env:
        held = await env.exec(PIPE_FLOOD, timeout_sec=120)
        r, w = os.pipe()
        try:
            size = fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
        finally:
            os.close(r)
            os.close(w)
    assert int(held.stdout) < 4000, held  # the trial met the per-user soft limit
    assert size == 1 << 20


@sync
async def test_the_kernel_keyring_is_refused_inside(tmp_path):
    probe = ("python3 -c \"import ctypes, os; l = ctypes.CDLL(None, use_errno=True); "
             "r = l.syscall(248, b'user', b'k', b'v', 1, -2); print(r, ctypes.get_errno())\"")  # add_key, x86_64
    if os.uname().machine != "x86_64":
        pytest.skip("the probe calls add_key by its x86_64 number")
    async with started(make_env(tmp_path)) as env:
        out = await env.exec(probe)
    result, err = map(int, out.stdout.split())
    assert result == -1 and err in (errno.EPERM, errno.ENOSYS, errno.EACCES), out


MULTIPROCESSING = ("python3 -c \"import multiprocessing as m\n"
                   "if __name__ == '__main__':\n"
                   "    with m.Pool(2) as p: print(sum(p.map(abs, [-1, -2, -3])))\n"
                   "    s = m.Semaphore(2); s.acquire(); print('semaphore', s.get_value())\"")


@sync
async def test_each_trial_has_its_own_writable_capped_dev_shm(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    async with started(make_env(tmp_path / "a")) as env, started(make_env(tmp_path / "b")) as other:
        pool = await env.exec(MULTIPROCESSING, timeout_sec=60)
        fill = await env.exec(f"head -c {bwrap.SHM_SIZE_MB + 16}M /dev/zero > /dev/shm/fill; echo $?; "
                              "du -m /dev/shm/fill | cut -f1", timeout_sec=60)
        seen = await other.exec("ls -A /dev/shm | wc -l")
    assert pool.stdout.split("\n")[:2] == ["6", "semaphore 1"], pool
    code, used = fill.stdout.split()
    assert code != "0" and int(used) <= bwrap.SHM_SIZE_MB  # ENOSPC at the cap
    assert seen.stdout.strip() == "0"  # the other trial's /dev/shm is its own


@sync
async def test_ps_and_mountinfo_inside_show_no_host_path_or_host_pid(tmp_path):
    # The backend's default: private roots on the RAM-backed /dev/shm.
    parent = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    if parent is None:
        pytest.skip("/dev/shm is not writable here")
    async with started(make_env(tmp_path, root_parent=parent)) as env:
        ps = await env.exec("for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done")
        mounts = await env.exec("cat /proc/self/mountinfo /proc/1/mountinfo")
        root = str(env.private_root)
    me = str(os.getpid())
    for shown in (ps.stdout, mounts.stdout):
        assert root not in shown and os.path.basename(root) not in shown
        assert f"aces-sandbox-{me}" not in shown
    assert "bwrap --args" in ps.stdout  # the probe did read PID 1
    assert " / / " in mounts.stdout  # ... and the root's mount
