"""The local sandbox itself: isolation, background processes, timeouts, file transfer.

Every test starts a real bubblewrap sandbox through LocalSandboxEnvironment.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from support.backends import (
    make_env,
    processes_in_namespace,
    processes_matching,
    started,
    sync,
)

from aces_bench.backends.provenance import PROVENANCE_FILE
from aces_bench.core.errors import BackendError

pytestmark = [pytest.mark.sandbox, pytest.mark.timeout(60)]

CONNECT = (
    "python3 -c \"import socket,sys; s=socket.socket(); s.settimeout(2)\n"
    "try:\n    s.connect(('{host}', {port})); print('connected')\n"
    "except OSError as e:\n    print('refused', e.errno); sys.exit(3)\""
)


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    return server


def _accepted(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


@sync
async def test_backends_sandbox_has_no_network(tmp_path):
    server = _listener()
    port = server.getsockname()[1]
    async with started(make_env(tmp_path)) as env:
        assert env.network_enabled is False
        loopback = await env.exec(CONNECT.format(host="127.0.0.1", port=port))
        outbound = await env.exec(CONNECT.format(host="1.1.1.1", port=53))
        links = await env.exec("cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '")
    assert loopback.return_code == 3, loopback
    assert outbound.return_code == 3, outbound
    assert "connected" not in (loopback.stdout or "") + (outbound.stdout or "")
    assert links.stdout.split() == ["lo"]
    assert not _accepted(server)
    server.close()


@sync
async def test_backends_explicit_public_network_reaches_the_host(tmp_path):
    """The control for the test above: the same probe connects when a task asks for network."""
    server = _listener()
    port = server.getsockname()[1]
    async with started(make_env(tmp_path, network_mode="public")) as env:
        assert env.network_enabled is True
        result = await env.exec(CONNECT.format(host="127.0.0.1", port=port))
    assert result.return_code == 0 and "connected" in result.stdout
    assert _accepted(server)
    server.close()


@sync
async def test_backends_default_network_mode_stays_offline(tmp_path):
    """Harbor's default network_mode is public; the local backend wants it said explicitly."""
    env = make_env(tmp_path, network_mode=None)
    assert env.network_enabled is False
    env = make_env(tmp_path / "again", network_mode=None, default_network=True)
    assert env.network_enabled is True


@sync
async def test_backends_sandbox_cannot_write_outside_its_root(tmp_path):
    host_marker = tmp_path / "host-only"
    host_marker.mkdir()
    root_before = sorted(os.listdir("/root"))
    env = make_env(tmp_path)
    tmp_before = sorted(os.listdir(tmp_path))
    async with started(env):
        private_root = env.private_root
        listing = await env.exec("ls / | sort | tr '\\n' ' '")
        attempts = {}
        for target in ("/usr/aces-x", "/etc/aces-x", "/usr/lib/aces-x", "/bin/aces-x", f"{host_marker}/x"):
            attempts[target] = await env.exec(f"echo pwned > {target}")
        remount = await env.exec("mount -o remount,rw /usr")
        mknod = await env.exec("mknod /tmp/disk b 8 0")
        home = await env.exec("echo mine > /root/aces-note && cat /root/aces-note")
        host_dirs = await env.exec(f"test -e /work || test -e /home/root || test -e {tmp_path}")
        sysctl = await env.exec("echo 1 > /proc/sys/kernel/sysrq")
    for target, result in attempts.items():
        assert result.return_code != 0, (target, result)
        assert not Path(target).exists()
    assert remount.return_code != 0 and mknod.return_code != 0 and sysctl.return_code != 0
    assert home.stdout == "mine\n"
    assert host_dirs.return_code != 0, "host dirs outside the allowed set are visible"
    assert listing.stdout.split() == [
        "bin", "dev", "etc", "home", "lib", "lib64", "logs", "proc", "root",
        "sbin", "skills", "tests", "tmp", "usr", "var", "workspace",
    ]
    assert sorted(os.listdir("/root")) == root_before
    assert not (host_marker / "x").exists()
    assert sorted(os.listdir(tmp_path)) == tmp_before
    assert not private_root.exists(), "stop(delete=True) must remove the private root"


@sync
async def test_backends_background_processes_survive_between_execs_and_die_at_stop(tmp_path):
    env = make_env(tmp_path)
    await env.start(force_build=False)
    try:
        started_at = time.perf_counter()
        spawn = await env.exec("sleep 30.4321 & echo started")
        assert spawn.stdout == "started\n"
        assert time.perf_counter() - started_at < 5, "exec waited for its background job"
        tmux = await env.exec("tmux new-session -d -s keep 'sleep 40.4321' && echo ok")
        assert tmux.return_code == 0, tmux
        later = await env.exec("ps -eo args")
        assert "sleep 30.4321" in later.stdout and "sleep 40.4321" in later.stdout
        assert (await env.exec("tmux has-session -t keep")).return_code == 0
        namespace = env.sandbox.pid_namespace
        assert processes_in_namespace(namespace)
    finally:
        await env.stop(delete=True)
    assert processes_in_namespace(namespace) == []
    assert processes_matching("sleep 30.4321") == [] and processes_matching("sleep 40.4321") == []
    assert processes_matching(str(env.private_root)) == [], "bwrap outlived stop()"


@sync
async def test_backends_exec_timeout_kills_the_command(tmp_path):
    async with started(make_env(tmp_path)) as env:
        began = time.perf_counter()
        with pytest.raises(RuntimeError, match=r"^Command timed out after 1 seconds$"):
            await env.exec("sleep 20.777 & sleep 21.777; echo never > /workspace/late", timeout_sec=1)
        assert time.perf_counter() - began < 5
        after = await env.exec("ps -eo args")
        assert "sleep 2" not in after.stdout
        assert (await env.exec("test -e /workspace/late")).return_code == 1
        # The sandbox still works after a timeout.
        assert (await env.exec("echo alive")).stdout == "alive\n"


@sync
async def test_backends_exec_result_env_cwd_and_user(tmp_path):
    dockerfile = "FROM ubuntu:24.04\nENV GREETING=hello TOOL_HOME=/opt/tool\nWORKDIR /workspace\n"
    async with started(make_env(tmp_path, dockerfile=dockerfile, persistent_env={"TRIAL": "t1"})) as env:
        result = await env.exec("echo out; echo err >&2; exit 7")
        assert (result.stdout, result.stderr, result.return_code) == ("out\n", "err\n", 7)
        silent = await env.exec("true")
        assert (silent.stdout, silent.stderr, silent.return_code) == (None, None, 0)
        shown = await env.exec('echo "$PWD $HOME $GREETING $TRIAL $EXTRA"', env={"EXTRA": "x"})
        assert shown.stdout == "/workspace /root hello t1 x\n"
        assert (await env.exec("pwd", cwd="/tmp")).stdout == "/tmp\n"
        assert (await env.exec("pwd", cwd="../skills")).stdout == "/skills\n"
        assert (await env.exec("env | grep -c OPENAI_ || true")).stdout == "0\n"
        nobody = await env.exec("id -u", user="nobody")
        assert nobody.stdout.strip() == str(65534)
        with pytest.raises(BackendError, match="user 'no-such-user' does not exist"):
            await env.exec("true", user="no-such-user")


@sync
async def test_backends_dockerfile_is_replayed_into_the_root(tmp_path):
    dockerfile = (
        "FROM python:3.12-slim\n"
        "WORKDIR /workspace\n"
        "COPY skills/ /skills/\n"
        "COPY --chmod=600 workspace/data/input.csv /opt/in/\n"
        "RUN mkdir -p /workspace/out && chmod 777 /workspace/out && echo built > /workspace/out/marker\n"
    )
    async with started(make_env(tmp_path, dockerfile=dockerfile)) as env:
        check = await env.exec(
            "head -1 /skills/demo/SKILL.md; stat -c %a /opt/in/input.csv /workspace/out; cat out/marker"
        )
        provenance = (env.trial_paths.trial_dir / PROVENANCE_FILE).read_text()
    assert check.stdout == "---\n600\n777\nbuilt\n"
    assert '"from_image": "python:3.12-slim"' in provenance and '"image_used": false' in provenance
    # Every protection this host can give is in force, so the record calls it a boundary.
    assert '"network": "off"' in provenance and '"security_note": "a boundary against hostile skills' in provenance
    assert '"missing_protections": {}' in provenance


@sync
async def test_backends_run_steps_build_without_network(tmp_path):
    server = _listener()
    port = server.getsockname()[1]
    dockerfile = (
        "FROM ubuntu:24.04\nWORKDIR /workspace\n"
        f"RUN python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\"\n"
    )
    env = make_env(tmp_path, dockerfile=dockerfile, network_mode="public")
    with pytest.raises(BackendError) as info:
        await env.start(force_build=False)
    message = str(info.value)
    assert message.startswith(
        f"{env.environment_dir / 'Dockerfile'}:3: RUN failed with exit code 1 "
        "in the local sandbox (no network, host userland):"
    )
    assert "ConnectionRefusedError" in message or "Network is unreachable" in message
    assert not _accepted(server)
    assert not env.private_root.exists(), "a failed start must clean up its private root"
    server.close()


@sync
async def test_backends_bwrap_missing_fails_at_start(tmp_path, monkeypatch):
    env = make_env(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(BackendError) as info:
        await env.start(force_build=False)
    assert str(info.value) == (
        "bubblewrap is not installed; install it with `apt-get install bubblewrap` "
        "(Debian/Ubuntu) or use backend=docker"
    )


@sync
async def test_backends_upload_download_map_into_the_private_root(tmp_path):
    source = tmp_path / "upload"
    (source / "nested").mkdir(parents=True)
    (source / "nested" / "f.txt").write_text("nested\n")
    (source / "top.sh").write_text("#!/bin/sh\necho top\n")
    os.chmod(source / "top.sh", 0o755)
    async with started(make_env(tmp_path)) as env:
        root = env.private_root
        await env.upload_dir(source, "/tests")
        await env.upload_file(source / "top.sh", "/solution/solve.sh")
        assert (root / "tests" / "nested" / "f.txt").read_text() == "nested\n"
        assert (await env.exec("/solution/solve.sh && cat /tests/nested/f.txt")).stdout == "top\nnested\n"

        # Logs stay in the private root: the host never reads the trial's files in place,
        # Harbor downloads them (a capped copy of regular files only).
        await env.exec("echo 1 > /logs/verifier/reward.txt && echo a > /logs/agent/a.txt")
        assert not (env.trial_paths.verifier_dir / "reward.txt").exists()
        assert not env.is_path_mounted("/logs/agent", env.trial_paths.agent_dir)
        await env.download_dir("/logs/verifier", env.trial_paths.verifier_dir)
        assert (env.trial_paths.verifier_dir / "reward.txt").read_text() == "1\n"

        await env.exec(
            "mkdir -p /workspace/res/sub && echo r > /workspace/res/sub/r.txt && ln -s /etc/passwd /workspace/res/link"
            " && ln -s sub/r.txt /workspace/res/inside && ln -s ../../etc/passwd /workspace/res/sub/up"
        )
        out = tmp_path / "down"
        await env.download_dir("/workspace/res", out)
        await env.download_file("/workspace/res/sub/r.txt", out / "copy.txt")
        assert (out / "sub" / "r.txt").read_text() == "r\n" and (out / "copy.txt").read_text() == "r\n"
        # Links are never followed: one that stays inside the copy is kept as a link,
        # one that points out of it (a host reader would follow it) is dropped.
        assert os.readlink(out / "inside") == "sub/r.txt"
        assert not os.path.lexists(out / "link") and not os.path.lexists(out / "sub" / "up")

        # A symlink the sandbox made cannot redirect an upload onto the host.
        await env.exec("ln -s /etc /workspace/evil && ln -s ../../usr /workspace/up")
        passwd_before = Path("/etc/passwd").read_bytes()
        for target in ("/workspace/evil/passwd", "/workspace/up/aces-x", "/usr/aces-x", "/proc/aces-x", "/../../etc/x"):
            with pytest.raises(BackendError, match="outside the sandbox's private root"):
                await env.upload_file(source / "top.sh", target)
        with pytest.raises(BackendError, match="outside the sandbox's private root"):
            await env.download_file("/workspace/evil/shadow", out / "shadow")
        assert Path("/etc/passwd").read_bytes() == passwd_before
        assert not Path("/usr/aces-x").exists() and not (out / "shadow").exists()

        # A relative link inside the root still resolves inside the root.
        await env.exec("ln -s data /workspace/d")
        await env.upload_file(source / "top.sh", "/workspace/d/via-link.sh")
        assert (root / "workspace" / "data" / "via-link.sh").exists()


@sync
async def test_backends_cancelled_exec_kills_the_command(tmp_path):
    """Harbor's agent timeout cancels the running exec; nothing of it may survive."""
    import asyncio

    async with started(make_env(tmp_path)) as env:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(env.exec("sleep 22.5 & sleep 23.5"), timeout=0.5)
        await asyncio.sleep(0.1)
        assert processes_matching("sleep 22.5") == [] and processes_matching("sleep 23.5") == []
        assert (await env.exec("echo alive")).stdout == "alive\n"


@sync
async def test_backends_stop_without_delete_keeps_the_root_but_no_process(tmp_path):
    env = make_env(tmp_path)
    await env.start(force_build=False)
    await env.exec("echo kept > /workspace/kept.txt; sleep 24.5 &")
    namespace = env.sandbox.pid_namespace
    await env.stop(delete=False)
    assert (env.private_root / "workspace" / "kept.txt").read_text() == "kept\n"
    assert processes_in_namespace(namespace) == [] and processes_matching("sleep 24.5") == []
    with pytest.raises(BackendError, match="the local sandbox is not started"):
        await env.exec("true")


@sync
async def test_backends_task_path_without_usr_bin_still_runs(tmp_path):
    """The sandbox's own tools are called by absolute path, not through the task's PATH."""
    dockerfile = "FROM ubuntu:24.04\nENV PATH=/opt/tools/bin\nWORKDIR /workspace\nRUN /usr/bin/mkdir -p /opt/x\n"
    async with started(make_env(tmp_path, dockerfile=dockerfile)) as env:
        result = await env.exec('echo "$PATH"; /usr/bin/id -u')
    assert result.stdout == "/opt/tools/bin\n0\n", result
