"""One long-lived bubblewrap sandbox per trial, entered with ``nsenter`` per command.

Why long-lived: a fresh ``bwrap`` per command would kill background processes between
commands (terminus-2 keeps a tmux server alive across its commands). So a sandbox is a
``bwrap`` whose payload only sleeps; each command enters its namespaces and root with
``nsenter`` and drops every privilege with ``setpriv``. Everything started inside lives
in the sandbox's PID namespace, so killing that namespace's init ends all of it.

The view inside: the private root (a host temp dir) bound read-write at ``/``; the
host's ``/usr``, ``/etc`` and ``/lib*``/``/bin``/``/sbin`` (as symlinks where the host
has symlinks) read-only, its secret files covered; a fresh ``/dev`` with a
``SHM_SIZE_MB`` tmpfs of its own at ``/dev/shm``, and ``/proc`` with ``/proc/sys``
(and ``/proc/sysrq-trigger``) read-only; no ``/sys``; and the given binds. PID 1's
command line names no host path (:func:`hide_host_paths`).
Nothing else of the host is visible and nothing outside the private root and the
writable binds is writable. Network is a fresh empty namespace unless asked for.

The boundary (see :func:`isolation_plan`, recorded per sandbox in ``protections``):

- **A user namespace.** On a root host, the payload makes it as a host uid of its own
  (:func:`namespace_owner`, so the per-user kernel counts the namespace is charged for
  are this sandbox's alone) and the host writes the namespace's map: ids 0..65535 inside are
  host ids ``SANDBOX_ID_BASE``..+65535, so root inside is no one on the host (kernel
  sysctls, root-only host files and host processes are out of its reach whatever it
  does). A non-root host gets bubblewrap's own namespace (root inside = that user).
  Files the host writes into the root are handed to the mapped owner (:func:`adopt`).
- **No capabilities and no_new_privs** for the payload and every entered command
  (``setpriv --bounding-set=-all --no-new-privs``).
- **A seccomp filter** (:mod:`aces_bench.backends.seccomp`) on the payload and on every
  entered command from before ``nsenter`` runs.
- **A process-count limit** (a pids cgroup, :mod:`aces_bench.backends.limits`).

Where the host cannot give one of these the sandbox still starts, and
``Sandbox.missing`` names what is missing and why (the trial records it; a caller that
wants a refusal instead checks it, see ``require_isolation`` in ``local.py``).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import os
import shutil
import signal
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from aces_bench.backends import seccomp
from aces_bench.backends.limits import kernel_counts
from aces_bench.core.errors import BackendError
from aces_bench.core.io import remove_tree

log = logging.getLogger(__name__)

BWRAP_MISSING = (
    "bubblewrap is not installed; install it with `apt-get install bubblewrap` "
    "(Debian/Ubuntu) or use backend=docker"
)

# The host's userland, shown read-only. Symlinks (merged /usr) are recreated as symlinks.
HOST_SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

# Host ids the sandbox's ids 0..SANDBOX_ID_COUNT-1 are mapped to on a root host: in the
# range systemd leaves unused (0x70000000..0x7FFDFFFF), far from real users and from the
# ranges container tools pick, so no host file or process belongs to them.
SANDBOX_ID_BASE = 0x70000000
SANDBOX_ID_COUNT = 65536
# The host uid that owns each sandbox's user namespace, one per sandbox, above the mapped
# ids and in the same unused range. The kernel charges the per-user counts of the
# namespace (inotify instances and watches, fanotify groups and marks, nested
# namespaces) to the namespace's owner at every level up: owned by host root, one trial's
# inotify flood left every root process on the host with EMFILE. Owned by a uid of its
# own, a trial can use at most the host's per-user limits, and only its own share.
OWNER_ID_BASE = SANDBOX_ID_BASE + SANDBOX_ID_COUNT
OWNER_ID_COUNT = 0x7FFE0000 - OWNER_ID_BASE
# Owners one process hands out before reusing one (its sandboxes at once stay far below).
OWNERS_PER_PROCESS = 256
# Processes (threads count) one sandbox may have at once: a fork bomb stops there.
DEFAULT_PIDS_LIMIT = 1024
# Each sandbox's own /dev/shm (POSIX shared memory and semaphores: Python's
# multiprocessing needs it): a tmpfs of this size, Docker's default; its pages are
# charged to the trial's memory cgroup like any tmpfs page the trial writes.
SHM_SIZE_MB = 64

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


# setpriv arguments every process inside gets: no capability can ever be regained
# (empty bounding and inheritable sets; ambient ones go with them) and no_new_privs, so
# neither a setuid binary nor file capabilities give anything back.
DROP_PRIVILEGES = ("--bounding-set=-all", "--inh-caps=-all", "--no-new-privs")

# /proc entries shown read-only (bubblewrap, run as root, skips /proc/sys: the kernel
# answers EACCES for the directory itself although its files are writable by root).
READ_ONLY_PROC = ("/proc/sys", "/proc/sysrq-trigger")


@dataclass(frozen=True)
class IsolationPlan:
    """How sandboxes on this host are isolated (see module doc); one per process.

    ``mode``: ``mapped`` (a root host: bwrap runs as ``SANDBOX_ID_BASE`` and the host maps
    65536 ids), ``unprivileged`` (a non-root host: bubblewrap's own user namespace,
    root inside = the user running aces-bench) or ``none`` (no user namespace:
    ``why_not`` says why). ``owner``: the host (uid, gid) of root inside when files the
    host writes into a root must be handed over, else None.
    """

    mode: str
    owner: tuple[int, int] | None
    why_not: str | None = None


# The payload in ``mapped`` mode: it makes the user namespace (bwrap built every other
# namespace and the view as host root), says so, waits until the host has written the
# id map, becomes root inside (host uid SANDBOX_ID_BASE) without privileges, then sleeps.
_USERNS_MARK = b"aces-sandbox-userns\n"
_MAPPED_PAYLOAD = ("echo aces-sandbox-userns; read -r mapped; "
                   'exec "$0" --reuid=0 --regid=0 --clear-groups "$@"')


_owners = itertools.count()


def namespace_owner() -> int:
    """A host uid no other live sandbox's user namespace is owned by (see OWNER_ID_BASE).

    The process's pid picks a block of OWNERS_PER_PROCESS ids and a counter walks it,
    so two aces-bench processes on one host never hand out the same owner unless their
    pids differ by a multiple of OWNER_ID_COUNT // OWNERS_PER_PROCESS (about a million).
    """
    slot = (os.getpid() * OWNERS_PER_PROCESS + next(_owners) % OWNERS_PER_PROCESS) % OWNER_ID_COUNT
    return OWNER_ID_BASE + slot


def bwrap_argv(
    root: Path,
    binds: tuple[Bind, ...],
    *,
    network: bool,
    hostname: str,
    info_fd: int,
    tools: dict[str, str] | None = None,
    mode: str = "none",
    owner: int | None = None,
) -> list[str]:
    """The ``bwrap`` command line that builds the sandbox's view (see module doc).

    ``owner`` (mapped mode): the host uid that makes, and so owns, the user namespace.
    """
    tools = tools or {}
    argv = [tools.get("bwrap", "bwrap"), "--bind", str(root), "/"]
    if mode == "unprivileged":
        argv += ["--unshare-user", "--uid", "0", "--gid", "0"]
    for name in HOST_SYSTEM_DIRS:
        host = Path(name)
        if host.is_symlink():
            argv += ["--symlink", os.readlink(host), name]
        elif host.is_dir():
            argv += ["--ro-bind", name, name]
    argv += hidden_host_secrets()
    argv += ["--dev", "/dev", "--perms", "1777", "--size", str(SHM_SIZE_MB * 1024 * 1024), "--tmpfs", "/dev/shm",
             "--proc", "/proc"]
    for name in READ_ONLY_PROC:
        if os.path.exists(name):
            argv += ["--ro-bind", name, name]
    for bind in binds:
        argv += ["--ro-bind" if bind.read_only else "--bind", str(bind.source), str(bind.target)]
    argv += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--hostname", hostname, "--die-with-parent", "--info-fd", str(info_fd)]
    # The payload's environment is built from nothing, whatever bwrap itself was given.
    argv += ["--clearenv", "--setenv", "PATH", INIT_ENV["PATH"]]
    # The payload says when the new root is ready (bwrap reports the child pid before
    # that), then only sleeps, without privileges; commands come in through nsenter.
    setpriv = tools.get("setpriv", "setpriv")
    sleep = [*DROP_PRIVILEGES, "--", "/bin/sh", "-c",
             "echo aces-sandbox-ready; exec sleep infinity </dev/null >/dev/null 2>&1"]
    if mode == "mapped":
        argv.append("--")
        if owner is not None:
            argv += [setpriv, f"--reuid={owner}", f"--regid={owner}", "--clear-groups", "--"]
        argv += [tools.get("unshare", "unshare"), "--user", "--keep-caps", "--", "/bin/sh", "-c", _MAPPED_PAYLOAD,
                 setpriv, *sleep]
    else:
        argv += ["--", setpriv, *sleep]
    return argv


def hide_host_paths(argv: list[str], args_fd: int) -> tuple[list[str], bytes]:
    """``argv`` with its options moved to ``--args args_fd``, and the bytes to put there.

    The sandbox's PID 1 is a fork of bwrap, so ``/proc/1/cmdline`` (``ps`` inside)
    would show every bind's host path: the private root (which carries the host pid
    of aces-bench) and the trial dir under the output folder among them. bwrap reads
    the options from the fd instead; only the payload stays on the command line.
    """
    end = argv.index("--")
    options = argv[1:end]
    data = b"".join(a.encode() + b"\0" for a in options)
    return [argv[0], "--args", str(args_fd), *argv[end:]], data


# Host files under the shared read-only /etc that only root may read. Root inside is
# no one on the host in a user namespace, so it cannot read them anyway; without one
# (see IsolationPlan) these are still covered with empty ones.
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

    ``nsenter`` joins the sandbox's namespaces (its user namespace too, which makes it
    root inside, no one outside); ``setpriv`` then drops every capability for good and
    sets no_new_privs; the seccomp filter is already on (installed before ``nsenter``
    starts, see ``Sandbox.exec``). ``uid``/``gid`` are ids inside (default root).
    ``isolate_network`` gives the command a fresh empty network namespace even when
    the sandbox has network (Dockerfile RUN steps build offline).
    """
    tool = (tools or {}).get
    out = [tool("nsenter", "nsenter"), "--target", str(pid), "--all", "--root", "--"]
    if isolate_network:
        out += [tool("unshare", "unshare"), "--net", "--"]
    uid = 0 if uid is None else uid
    gid = uid if gid is None else gid
    out += [tool("setpriv", "setpriv"), *DROP_PRIVILEGES, f"--reuid={uid}", f"--regid={gid}", "--clear-groups"]
    # env -C changes directory inside the new root; nsenter's --wd resolves on the host.
    out += ["--", tool("env", "/usr/bin/env"), "-C", cwd, *argv]
    return out


@functools.cache
def isolation_plan() -> IsolationPlan:
    """How this host can isolate sandboxes (cached; one bubblewrap probe of ~20 ms).

    A root host gets a user namespace with the host-written map when a probe sandbox
    built that way starts (the kernel allows user namespaces, and a ``/proc`` can be
    mounted in one); otherwise the plan says why not and sandboxes run without one.
    """
    if os.geteuid() != 0:
        return IsolationPlan("unprivileged", None)
    tools, missing = find_tools()
    if missing:
        return IsolationPlan("none", None, f"{', '.join(missing)} not found")
    why = _probe_mapped(tools)
    if why is None:
        return IsolationPlan("mapped", (SANDBOX_ID_BASE, SANDBOX_ID_BASE))
    log.warning("local sandbox: no user namespace on this host (%s); root inside a sandbox is "
                "host root without capabilities", why)
    return IsolationPlan("none", None, why)


def _probe_mapped(tools: dict[str, str]) -> str | None:
    """Whether this host lets root make a user namespace and map ids in it; None when yes, else why not."""
    try:
        done = subprocess.run([tools["unshare"], "--user", "--map-root-user", "/bin/true"], capture_output=True,
                              stdin=subprocess.DEVNULL, env=dict(INIT_ENV), timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run unshare: {exc}"
    if done.returncode != 0:
        return " ".join(done.stderr.decode(errors="replace").split())[:300] or f"unshare exited {done.returncode}"
    return None


def write_id_map(pid: int) -> None:
    """Map ids 0..SANDBOX_ID_COUNT-1 of ``pid``'s new user namespace to the sandbox's host ids."""
    line = f"0 {SANDBOX_ID_BASE} {SANDBOX_ID_COUNT}\n"
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(line)


def _child_of(pid: int) -> int | None:
    """The host pid of ``pid``'s (only) child: the sandbox's payload under bwrap's init."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            return int(entry)
    return None


def _clear_symlink_points(root: Path) -> None:
    """Remove what a sandbox left where bwrap makes the host's ``/bin``-style symlinks.

    A second sandbox on the same root (the verifier's restart) would otherwise fail on
    the links the first one made there, or on whatever the agent put in their place.
    Top-level entries of the root only: no link can be on the way to them.
    """
    for name in HOST_SYSTEM_DIRS:
        if not os.path.islink(name):
            continue
        entry = root / name.lstrip("/")
        if entry.is_symlink() or (os.path.lexists(entry) and not entry.is_dir()):
            entry.unlink()
        elif entry.is_dir():
            remove_tree(entry)


def _make_mount_points(root: Path, binds: tuple[Bind, ...]) -> None:
    """Create each bind's mount point dirs in the root, 0755, so root inside can pass them.

    bwrap would make missing ones 0700 and owned by the host's root, which root inside
    (no one on the host) could not enter. Walked with ``O_NOFOLLOW`` from the root: a
    link the sandbox left on the way is not followed on the host (bwrap then resolves
    the target inside the new root, as it would anyway).
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    for bind in binds:
        parts = [p for p in bind.target.parts if p != "/"]
        if not bind.source.is_dir():
            parts = parts[:-1]
        fd = os.open(root, flags)
        try:
            for name in parts:
                try:
                    os.mkdir(name, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                try:
                    nxt = os.open(name, flags, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = nxt
        finally:
            os.close(fd)


def adopt(path: Path, owner: tuple[int, int] | None) -> None:
    """Hand what the host wrote under ``path`` (and ``path``) to ``owner``: root inside the sandbox.

    Only entries owned by the user running aces-bench change hands (a ``COPY --chown``
    target keeps its mapped owner); symlinks are never followed. No-op without an owner.
    """
    if owner is None:
        return
    me = os.getuid()
    stack = [str(path)]
    while stack:
        current = stack.pop()
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            continue
        if st.st_uid == me:
            os.chown(current, *owner, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            try:
                stack += [os.path.join(current, name) for name in os.listdir(current)]
            except OSError:
                continue


class Sandbox:
    """A running bubblewrap sandbox over ``root`` with ``binds`` (see module doc).

    ``cgroup``: a ``limits.TrialCgroup`` that bwrap and every entered command join
    before exec (the caller's limits, its process limit included). Without one the
    sandbox makes its own with a process limit of ``pids_limit`` (None: none) and
    removes it at stop. After ``start``, ``protections`` says how each protection was
    applied and ``missing`` lists, with the reason, those this host could not give.
    """

    def __init__(self, root: Path, binds: tuple[Bind, ...] = (), *, network: bool = False, hostname: str = "sandbox",
                 cgroup=None, pids_limit: int | None = DEFAULT_PIDS_LIMIT):
        self.root = Path(root)
        self.cgroup = cgroup
        self._own_cgroup = False
        self._pids_limit = pids_limit
        self.binds = tuple(binds)
        self.network = network
        self.hostname = hostname
        self.pid: int | None = None  # bwrap's init (PID 1 inside): killing it ends the sandbox
        self.enter_pid: int | None = None  # the process whose namespaces commands enter
        self.owner_uid: int | None = None  # host uid owning the user namespace (mapped mode)
        self.pid_namespace: int | None = None
        self.plan: IsolationPlan | None = None
        self.protections: dict[str, str] = {}
        self.missing: dict[str, str] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._pidfd: int | None = None
        self._stderr = None
        self._groups: set[int] = set()
        self._tools: dict[str, str] = {}
        self._seccomp = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def owner(self) -> tuple[int, int] | None:
        """Host (uid, gid) of root inside, which host-written files must belong to; None: the runner."""
        return self.plan.owner if self.plan is not None else None

    def adopt(self, path: Path) -> None:
        """Hand a host path the host wrote into this sandbox's root or binds to root inside."""
        adopt(path, self.owner)

    async def prepare(self) -> IsolationPlan:
        """Decide the isolation before the root is filled, and what is in force; idempotent.

        After it, ``owner``, ``protections`` and ``missing`` are known (a caller may
        refuse to ``start`` on ``missing``).
        """
        if self.plan is not None:
            return self.plan
        self.plan = await asyncio.to_thread(isolation_plan)
        if self.plan.mode == "mapped":
            self.owner_uid = namespace_owner()
        if self.cgroup is None and self._pids_limit:
            from aces_bench.backends.limits import TrialCgroup

            name = f"aces-sandbox-{os.getpid()}-{self.root.name}"
            self.cgroup = TrialCgroup.create(name, memory_mb=None, cpus=None, pids=self._pids_limit)
            self._own_cgroup = self.cgroup is not None
        self._seccomp = seccomp.installer()
        self._record_protections(self.plan)
        return self.plan

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
        plan = await self.prepare()
        _clear_symlink_points(self.root)
        _make_mount_points(self.root, self.binds)
        self.adopt(self.root)
        try:
            await self._spawn(plan)
        except BaseException:
            self._drop_own_cgroup()
            raise

    async def _spawn(self, plan: IsolationPlan) -> None:
        info_read, info_write = os.pipe()
        # bwrap's stderr goes to a file: a pipe nobody reads could later SIGPIPE it.
        self._stderr = _memory_file("aces-bwrap-stderr")
        args_file = _memory_file("aces-bwrap-args")
        argv, hidden = hide_host_paths(
            bwrap_argv(self.root, self.binds, network=self.network, hostname=self.hostname,
                       info_fd=info_write, tools=self._tools, mode=plan.mode, owner=self.owner_uid),
            args_file.fileno(),
        )
        args_file.write(hidden)
        args_file.flush()
        args_file.seek(0)
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv,
            pass_fds=(info_write, args_file.fileno()),
            # mapped mode: the payload waits on stdin until the host has written its id map.
            stdin=subprocess.PIPE if plan.mode == "mapped" else subprocess.DEVNULL,
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
            first = await self._proc.stdout.readline()
            info = await info_task
            ready = first
            if plan.mode == "mapped" and first == _USERNS_MARK and info:
                # The payload made its user namespace: map it, then let it go on.
                payload = _child_of(int(json.loads(info)["child-pid"]))
                if payload is not None:
                    await asyncio.to_thread(write_id_map, payload)
                    self.enter_pid = payload
                self._proc.stdin.write(b"mapped\n")
                await self._proc.stdin.drain()
                self._proc.stdin.close()
                ready = await self._proc.stdout.readline()
        except BaseException:
            # Cancelled (Ctrl-C) or failed before bwrap said where its init is: stop() has
            # no pidfd yet and would wait for bwrap in vain, so kill its session now; its
            # exit gives the reader EOF.
            _kill_group(self._proc.pid)
            info_task.add_done_callback(_retrieve)
            raise
        if ready != _READY or not info or (plan.mode == "mapped" and self.enter_pid is None):
            _kill_group(self._proc.pid)
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
        if self.enter_pid is None:
            self.enter_pid = self.pid
        # A pidfd pins the init process: signalling it can never hit a reused pid.
        self._pidfd = os.pidfd_open(self.pid)

    def _record_protections(self, plan: IsolationPlan) -> None:
        """Fill ``protections`` and ``missing`` (what the trial records and the report states)."""
        got, missing = self.protections, self.missing
        got["capabilities"] = "none: bounding, inheritable and ambient sets empty for every process"
        got["no_new_privs"] = "set for every process"
        if plan.mode == "mapped":
            got["user_namespace"] = (f"root inside is host uid {SANDBOX_ID_BASE} (ids 0-{SANDBOX_ID_COUNT - 1} "
                                     f"mapped to {SANDBOX_ID_BASE}-{SANDBOX_ID_BASE + SANDBOX_ID_COUNT - 1})")
        elif plan.mode == "unprivileged":
            got["user_namespace"] = f"root inside is host uid {os.getuid()} (the user running aces-bench)"
        else:
            missing["user_namespace"] = (f"no user namespace ({plan.why_not}): root inside is host root "
                                         "without capabilities; root-only host files it owns are readable")
        if self.owner_uid is not None:
            got["kernel_counts"] = kernel_counts(self.owner_uid)
        else:
            missing["kernel_counts"] = ("per-user kernel counts (inotify, fanotify, namespaces) are shared with host uid "
                                        f"{os.getuid()}: only a root host gives each sandbox a namespace owner of its own")
        got["kernel_files"] = "/proc/sys and /proc/sysrq-trigger read-only, /sys not mounted"
        got["host_secrets"] = ("/etc/shadow, gshadow, sudoers, ssl/private and SSH host keys covered"
                               + ("; other root-only host files unreadable (host root is not mapped)"
                                  if plan.mode != "none" else ""))
        if self._seccomp is not None:
            got["seccomp"] = f"refuses {seccomp.SUMMARY}"
        else:
            missing["seccomp"] = "no seccomp filter: libseccomp (libseccomp2) or pyseccomp is not installed"
        if self.cgroup is not None and getattr(self.cgroup, "pids", None):
            got["processes"] = f"at most {self.cgroup.pids} (cgroup v{self.cgroup.version} pids.max)"
        elif self._pids_limit or self.cgroup is not None:
            missing["processes"] = "no process-count limit: no writable pids cgroup on this host"

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
            self.enter_pid, argv, cwd=cwd, uid=uid, gid=gid, isolate_network=isolate_network, tools=self._tools
        )
        with _memory_file("aces-exec-stdout") as out, _memory_file("aces-exec-stderr") as err:
            proc = await asyncio.create_subprocess_exec(
                *full,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=sandbox_env(env),
                start_new_session=True,
                preexec_fn=self._before_enter,
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

    def _before_enter(self) -> None:
        """In the child that becomes ``nsenter``: join the cgroup, then seccomp and no_new_privs.

        The filter is on before ``nsenter`` runs, so the entered command and everything
        it starts inherit it (seccomp passes through fork and exec, never out).
        """
        if self.cgroup is not None:
            self.cgroup.join()
        if self._seccomp is not None:
            self._seccomp()

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
        self._drop_own_cgroup()

    def _drop_own_cgroup(self) -> None:
        if self._own_cgroup and self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
            self._own_cgroup = False


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
