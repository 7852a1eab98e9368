"""The seccomp filter every process in a local sandbox runs under.

The filter is built once with libseccomp (through ``pyseccomp``, a ctypes binding) and
exported as a classic BPF program. It refuses, with EPERM, the system calls a sandboxed
workload has no business making and a hostile one would use against the host:

- mounting and mount-namespace surgery (``mount``, ``umount2``, ``pivot_root``, the new
  mount API), so nothing read-only in the sandbox's view can be made writable;
- the kernel keyring (``keyctl``, ``add_key``, ``request_key``);
- ``ptrace`` and its relatives (``process_vm_readv``/``writev``, ``pidfd_getfd``), so
  no process can read or steer another one, inside or outside;
- ``bpf``, ``perf_event_open``, ``userfaultfd`` and ``io_uring`` (kernel attack
  surface), kernel modules (``init_module``, ``finit_module``, ``delete_module``),
  ``kexec_*``, ``reboot``, ``swapon``/``swapoff``, ``acct``, ``quotactl``, the
  obsolete ``_sysctl`` and ``open_by_handle_at``;
- a new user namespace (``unshare``/``clone`` with ``CLONE_NEWUSER``; ``clone3``
  answers ENOSYS so the C library falls back to ``clone``, whose flags are visible).

Anything else is allowed. A system call of a foreign architecture (32-bit x86 on a
64-bit host) kills the process, so the filter cannot be side-stepped that way.

Two ways in: bubblewrap applies the program to the sandbox's own payload
(``bwrap --seccomp FD``), and :func:`install` applies it in the child process that
becomes ``nsenter`` for each command entered into the sandbox (a ``preexec_fn``), so
the entered command and everything it starts inherit it, with ``no_new_privs`` set.

Where libseccomp or its binding is missing, :func:`program` returns None and the
sandbox records the filter as a missing protection.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import logging
import os

log = logging.getLogger(__name__)

REFUSED = (
    # mounts and the mount namespace
    "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    # the kernel keyring
    "keyctl", "add_key", "request_key",
    # reading or steering other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    # kernel attack surface
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # kernel modules, kexec, the machine
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "_sysctl", "open_by_handle_at",
    "lookup_dcookie", "nfsservctl", "iopl", "ioperm",
)
# What the report and local-sandbox.json say the filter refuses.
SUMMARY = ("mount, keyctl, ptrace, bpf, perf_event_open, io_uring, kernel modules, kexec, reboot, "
           "swap, _sysctl, open_by_handle_at, new user namespaces")

CLONE_NEWUSER = 0x10000000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def program() -> bytes | None:
    """The filter as a BPF program (8 bytes per instruction); None when it cannot be built here."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # the binding, or libseccomp.so itself, is missing
        log.debug("seccomp: libseccomp is unavailable: %s", exc)
        return None
    try:
        filt = sc.SyscallFilter(sc.ALLOW)
        for name in REFUSED:
            number = sc.resolve_syscall(sc.Arch.NATIVE, name)
            if number < 0:  # not a system call on this architecture
                continue
            filt.add_rule(sc.ERRNO(errno.EPERM), number)
        new_user = sc.Arg(0, sc.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        filt.add_rule(sc.ERRNO(errno.EPERM), "unshare", new_user)
        filt.add_rule(sc.ERRNO(errno.EPERM), "clone", new_user)
        if sc.resolve_syscall(sc.Arch.NATIVE, "clone3") >= 0:
            filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        fd = os.memfd_create("aces-seccomp")
        with open(fd, "w+b") as out:
            filt.export_bpf(out)
            out.seek(0)
            data = out.read()
    except OSError as exc:
        log.debug("seccomp: cannot build the filter: %s", exc)
        return None
    return data if data and len(data) % 8 == 0 else None


def program_fd() -> int | None:
    """A readable fd holding the BPF program, for ``bwrap --seccomp FD`` (caller closes it)."""
    data = program()
    if data is None:
        return None
    fd = os.memfd_create("aces-seccomp-bwrap")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Installer:
    """Applies the filter in a child process before it execs (a ``preexec_fn``).

    Everything is prepared in the parent: after ``fork`` the child only makes two
    ``prctl`` calls on memory that already exists (no allocation in libseccomp).
    """

    def __init__(self, data: bytes):
        self._buffer = ctypes.create_string_buffer(data, len(data))
        self._prog = _SockFprog(len(data) // 8, ctypes.cast(self._buffer, ctypes.c_void_p))
        self._prctl = _libc().prctl
        self._prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        self._ref = ctypes.byref(self._prog)

    def __call__(self) -> None:
        if self._prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self._ref, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


@functools.cache
def installer() -> Installer | None:
    data = program()
    return Installer(data) if data is not None else None


@functools.cache
def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
