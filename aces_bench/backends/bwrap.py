"""One long-lived bubblewrap sandbox per trial, entered with ``nsenter`` per command.

Why long-lived: a fresh ``bwrap`` per command would kill background processes between
commands (terminus-2 keeps a tmux server alive across its commands). So a sandbox is a
``bwrap`` whose payload only sleeps; each command enters its namespaces and root with
``nsenter`` and drops capabilities with ``setpriv``. Everything started inside lives in
the sandbox's PID namespace, so killing that namespace's init ends all of it.

The view inside: the private root (a host temp dir) bound read-write at ``/``; the
host's ``/usr``, ``/etc`` and ``/lib*``/``/bin``/``/sbin`` (as symlinks where the host
has symlinks) read-only; a fresh ``/dev`` and ``/proc``; and the given binds (Harbor's
trial log dirs). Nothing else of the host is visible and nothing outside the private
root and the binds is writable. Network is a fresh empty namespace unless asked for.

Bubblewrap running as root is isolation for honest workloads, not a security boundary
against hostile code.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from aces_bench.errors import BackendError

SECURITY_NOTE = (
    "bubblewrap running as root is isolation for honest workloads, "
    "not a security boundary against hostile code"
)

BWRAP_MISSING = (
    "bubblewrap is not installed; install it with `apt-get install bubblewrap` "
    "(Debian/Ubuntu) or use backend=docker"
)

# The host's userland, shown read-only. Symlinks (merged /usr) are recreated as symlinks.
HOST_SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# Docker's default capability set minus MKNOD (no device cgroup here to make it safe).
# Without CAP_SYS_ADMIN a command cannot remount the read-only host dirs writable.
KEPT_CAPABILITIES = (
    "chown", "dac_override", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap",
    "net_bind_service", "net_raw", "sys_chroot", "audit_write", "setfcap",
)

_READY = b"aces-sandbox-ready\n"

# The whole environment bwrap is started with, and so the environment of the sandbox's
# PID 1 (bwrap's own init, a fork that keeps bwrap's environment) and of its payload.
# Nothing of the host's environment is inherited: a trial's commands get only what
# ``Sandbox.exec`` is given (see ``sandbox_env``).
INIT_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


class ExecTimeout(RuntimeError):
    """A command ran past its timeout; its process group was killed.

    A ``RuntimeError`` with Docker's message, because that is what Harbor's own
    environments raise and what its agents expect on timeout.
    """

    def __init__(self, timeout_sec: float):
        self.timeout_sec = timeout_sec
        super().__init__(f"Command timed out after {timeout_sec} seconds")


@dataclass(frozen=True)
class Bind:
    """A host directory shown at ``target`` inside the sandbox."""

    source: Path
    target: PurePosixPath
    read_only: bool = False


@dataclass(frozen=True)
class ExecOutput:
    stdout: bytes
    stderr: bytes
    return_code: int


TOOLS = ("bwrap", "nsenter", "unshare", "setpriv", "env")


def find_tools() -> tuple[dict[str, str], list[str]]:
    """Absolute paths of the host tools the sandbox needs, and the names not found.

    Absolute because commands run with the task's PATH, which may not list them; the
    in-sandbox ones (unshare, setpriv, env) live under the host /usr the sandbox shares.
    """
    found = {tool: shutil.which(tool) for tool in TOOLS}
    return {k: v for k, v in found.items() if v}, [k for k, v in found.items() if not v]


def bwrap_argv(
    root: Path,
    binds: tuple[Bind, ...],
    *,
    network: bool,
    hostname: str,
    info_fd: int,
    tools: dict[str, str] | None = None,
) -> list[str]:
    """The ``bwrap`` command line that builds the sandbox's view (see module doc)."""
    argv = [tools.get("bwrap", "bwrap"), "--bind", str(root), "/"]
    for name in HOST_SYSTEM_DIRS:
        host = Path(name)
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), name]
        elif host.is_dir():
            argv += ["--ro-bind", name, name]
    argv += hidden_host_secrets()
    argv += ["--dev", "/dev", "--proc", "/proc"]
    for bind in binds:
        argv += ["--ro-bind" if bind.read_only else "--bind", str(bind.source), str(bind.target)]
    argv += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--hostname", hostname, "--die-with-parent", "--info-fd", str(info_fd)]
    # The payload's environment is built from nothing, whatever bwrap itself was given.
    argv += ["--clearenv", "--setenv", "PATH", INIT_ENV["PATH"]]
    # The payload says when the new root is ready (bwrap reports the child pid before
    # that), then only sleeps; commands come in through nsenter.
    argv += ["--", "/bin/sh", "-c", "echo aces-sandbox-ready; exec sleep infinity </dev/null >/dev/null 2>&1"]
    return argv


def hide_host_paths(argv: list[str], args_fd: int) -> tuple[list[str], bytes]:
    """``argv`` with its options moved to ``--args args_fd``, and the bytes to put there.

    The sandbox's PID 1 is a fork of bwrap, so ``/proc/1/cmdline`` (``ps`` inside)
    would show every bind's host path: the trial dir under the output folder among
    them. bwrap reads the options from the fd instead; only the private root bind
    (``argv[1:4]``, how the host finds its sandboxes) and the payload stay on the
    command line.
    """
    end = argv.index("--")
    options = argv[4:end]
    data = b"".join(a.encode() + b"\0" for a in options)
    return [*argv[:4], "--args", str(args_fd), *argv[end:]], data


# Host files under the shared read-only /etc that only root may read: root inside keeps
# CAP_DAC_OVERRIDE, so read-only is not enough; they are covered with empty ones.
HIDDEN_HOST_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers")
HIDDEN_HOST_DIRS = ("/etc/ssl/private", "/etc/sudoers.d")


def hidden_host_secrets() -> list[str]:
    """bwrap arguments covering the host's secret files under /etc (see HIDDEN_HOST_*)."""
    argv: list[str] = []
    for name in HIDDEN_HOST_FILES:
        if os.path.isfile(name) and not os.path.islink(name):
            argv += ["--ro-bind", "/dev/null", name]
    for name in HIDDEN_HOST_DIRS:
        if os.path.isdir(name) and not os.path.islink(name):
            argv += ["--tmpfs", name, "--remount-ro", name]
    for key in sorted(Path("/etc/ssh").glob("ssh_host_*_key")) if os.path.isdir("/etc/ssh") else ():
        if key.is_file() and not key.is_symlink():
            argv += ["--ro-bind", "/dev/null", str(key)]
    return argv


def enter_argv(
    pid: int,
    argv: list[str],
    *,
    cwd: str,
    uid: int | None = None,
    gid: int | None = None,
    isolate_network: bool = False,
    tools: dict[str, str] | None = None,
) -> list[str]:
    """The command line that runs ``argv`` inside the sandbox whose init is ``pid``.

    ``isolate_network`` gives the command a fresh empty network namespace even when
    the sandbox has network (Dockerfile RUN steps build offline).
    """
    tool = (tools or {}).get
    out = [tool("nsenter", "nsenter"), "--target", str(pid), "--all", "--root", "--"]
    if isolate_network:
        out += [tool("unshare", "unshare"), "--net", "--"]
    caps = "-all," + ",".join("+" + c for c in KEPT_CAPABILITIES)
    out += [tool("setpriv", "setpriv"), f"--bounding-set={caps}", "--inh-caps=-all"]
    if uid is not None:
        out += [f"--reuid={uid}", f"--regid={gid if gid is not None else uid}", "--clear-groups"]
    # env -C changes directory inside the new root; nsenter's --wd resolves on the host.
    out += ["--", tool("env", "/usr/bin/env"), "-C", cwd, *argv]
    return out


class Sandbox:
    """A running bubblewrap sandbox over ``root`` with ``binds`` (see module doc)."""

    def __init__(self, root: Path, binds: tuple[Bind, ...] = (), *, network: bool = False, hostname: str = "sandbox",
                 cgroup=None):
        self.root = Path(root)
        # A limits.TrialCgroup that bwrap and every entered command join before exec.
        self.cgroup = cgroup
        self.binds = tuple(binds)
        self.network = network
        self.hostname = hostname
        self.pid: int | None = None
        self.pid_namespace: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._pidfd: int | None = None
        self._stderr = None
        self._groups: set[int] = set()
        self._tools: dict[str, str] = {}

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    async def start(self) -> None:
        """Start bwrap and return once commands can enter the new root."""
        self._tools, missing = find_tools()
        if "bwrap" in missing:
            raise BackendError(BWRAP_MISSING)
        if missing:
            raise BackendError(
                f"{', '.join(missing)} not found on PATH; the local backend needs util-linux and coreutils",
                fix="install them (apt-get install util-linux coreutils) or use backend=docker",
            )
        info_read, info_write = os.pipe()
        # bwrap's stderr goes to a file: a pipe nobody reads could later SIGPIPE it.
        self._stderr = _memory_file("aces-bwrap-stderr")
        args_file = _memory_file("aces-bwrap-args")
        argv, hidden = hide_host_paths(
            bwrap_argv(self.root, self.binds, network=self.network, hostname=self.hostname,
                       info_fd=info_write, tools=self._tools),
            args_file.fileno(),
        )
        args_file.write(hidden)
        args_file.flush()
        args_file.seek(0)
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv,
            pass_fds=(info_write, args_file.fileno()),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(INIT_ENV),
            start_new_session=True,
            preexec_fn=self.cgroup.join if self.cgroup is not None else None,
        ))
        try:
            # Shielded: a cancelled spawn kills bwrap's own pid only, then waits for its
            # stdout to close, which the sandbox's init (a separate process in bwrap's
            # session) can hold open forever. Instead let it finish and kill the session.
            self._proc = await asyncio.shield(spawn)
        except BaseException:
            spawn.add_done_callback(_kill_spawned)
            os.close(info_read)
            raise
        finally:
            os.close(info_write)
            args_file.close()
        # Read the info fd to its end in a thread (closing it early kills bwrap: SIGPIPE).
        # The thread closes it at EOF: closed under a blocked read, the descriptor's number
        # could be reused and the thread's next read would hit some other file.
        info_task = asyncio.ensure_future(asyncio.to_thread(_read_all_and_close, info_read))
        try:
            ready = await self._proc.stdout.readline()
            info = await info_task
        except BaseException:
            # Cancelled (Ctrl-C) or failed before bwrap said where its init is: stop() has
            # no pidfd yet and would wait for bwrap in vain, so kill its session now; its
            # exit gives the reader EOF.
            _kill_group(self._proc.pid)
            info_task.add_done_callback(_retrieve)
            raise
        if ready != _READY or not info:
            await self._proc.wait()
            self._stderr.seek(0)
            detail = self._stderr.read().decode(errors="replace").strip() or f"exit code {self._proc.returncode}"
            raise BackendError(
                f"bubblewrap failed to start the sandbox: {detail}",
                fix="check that bwrap can create namespaces here (run as root, or enable "
                "unprivileged user namespaces), or use backend=docker",
            )
        parsed = json.loads(info)
        self.pid = int(parsed["child-pid"])
        self.pid_namespace = parsed.get("pid-namespace")
        # A pidfd pins the init process: signalling it can never hit a reused pid.
        self._pidfd = os.pidfd_open(self.pid)

    async def exec(
        self,
        argv: list[str],
        *,
        cwd: str = "/",
        env: dict[str, str] | None = None,
        timeout_sec: float | None = None,
        uid: int | None = None,
        gid: int | None = None,
        isolate_network: bool = False,
    ) -> ExecOutput:
        """Run ``argv`` inside the sandbox and wait for it (not for its background jobs).

        Output goes to in-memory files rather than pipes, so a background process
        that keeps the descriptors open cannot make the call hang. On timeout or
        cancellation the command's whole process group is killed at once (killing
        ``nsenter`` alone would orphan its child); raises :class:`ExecTimeout`.
        """
        if not self.running or self.pid is None:
            raise BackendError(
                "the sandbox is not running (it was stopped or its init died)",
                where=str(self.root),
                fix="see the trial log for why the sandbox ended",
            )
        full = enter_argv(
            self.pid, argv, cwd=cwd, uid=uid, gid=gid, isolate_network=isolate_network, tools=self._tools
        )
        with _memory_file("aces-exec-stdout") as out, _memory_file("aces-exec-stderr") as err:
            proc = await asyncio.create_subprocess_exec(
                *full,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=sandbox_env(env),
                start_new_session=True,
                preexec_fn=self.cgroup.join if self.cgroup is not None else None,
            )
            self._groups.add(proc.pid)
            try:
                if timeout_sec:
                    await asyncio.wait_for(proc.wait(), timeout=timeout_sec)
                else:
                    await proc.wait()
            except TimeoutError:
                _kill_group(proc.pid)
                await proc.wait()
                raise ExecTimeout(timeout_sec) from None
            except BaseException:
                _kill_group(proc.pid)
                raise
            finally:
                self._groups.discard(proc.pid)
            out.seek(0)
            err.seek(0)
            return ExecOutput(stdout=out.read(), stderr=err.read(), return_code=proc.returncode or 0)

    async def stop(self) -> None:
        """Kill everything in the sandbox and wait for bwrap to exit. Idempotent."""
        if self._pidfd is not None:
            # Killing the PID namespace's init makes the kernel kill every process in it.
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(self._pidfd)
            self._pidfd = None
        for group in list(self._groups):
            _kill_group(group)
        if self._proc is not None and self._proc.returncode is None:
            try:
                await asyncio.wait_for(self._proc.wait(), timeout=5)
            except TimeoutError:
                _kill_group(self._proc.pid)
                await self._proc.wait()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def sandbox_env(env: dict[str, str] | None) -> dict[str, str]:
    """The complete environment of a command entered into the sandbox: ``env`` and nothing else.

    ``nsenter``, ``setpriv`` and ``env`` pass their environment on to the command, so
    this is the command's whole environment; never the host's (an empty ``env`` gives
    an empty environment, not an inherited one).
    """
    return {str(k): str(v) for k, v in (env or {}).items()}


def _memory_file(name: str):
    """An anonymous in-memory file (memfd): no disk traffic for every command's output."""
    return open(os.memfd_create(name), "w+b")


def _read_all_and_close(fd: int) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def _kill_spawned(spawn: asyncio.Future) -> None:
    """Kill the whole session of a process whose start was abandoned."""
    if not spawn.cancelled() and spawn.exception() is None:
        _kill_group(spawn.result().pid)


def _retrieve(future: asyncio.Future) -> None:
    """Mark an abandoned future's outcome as seen (no 'exception never retrieved')."""
    if not future.cancelled():
        future.exception()


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
