"""``backend=local``: a Harbor environment that runs each trial in a bubblewrap sandbox.

Load it by import path::

    EnvironmentConfig(import_path="aces_bench.backends.local:LocalSandboxEnvironment")

Per trial it makes a private writable root (a host temp dir), replays the task's
Dockerfile subset onto it (see :mod:`aces_bench.backends.dockerfile`), and starts one
long-lived sandbox (see :mod:`aces_bench.backends.bwrap`) that shows the host's
``/usr``, ``/etc`` and ``/lib*`` read-only and binds the trial's host log dirs at
``/logs/agent``, ``/logs/verifier`` and ``/logs/artifacts``, so Harbor reads logs and
rewards straight from the trial dir; when the trial has a disk cap (``storage_mb``)
those dirs stay inside the capped private root instead and are copied out.
Network is off unless the task's
``[environment].network_mode`` explicitly says ``public``.

The ``FROM`` image is recorded, never pulled: commands run on the host's userland.
That, the network setting and the isolation used (each protection of
:mod:`aces_bench.backends.bwrap` as applied, and any this host could not give) are
logged and written to ``<trial dir>/local-sandbox.json`` for reports.

The grader is out of the agent's reach: aces-bench's own tasks ask Harbor for a
separate verifier environment, so the agent's sandbox is stopped (its PID namespace
killed) before a fresh sandbox, built from the task's Dockerfile, receives the agent's
workspace as copied data and runs ``tests/test.sh``. A task that keeps Harbor's shared
verifier gets the same end of every agent process: the sandbox is restarted on the same
root when ``/tests`` is uploaded, ``/tests`` is emptied first, and verifier commands run
with a fresh ``HOME``.

Nothing a trial writes is read on the host in place: ``/logs`` stays inside the private
root and every download goes through :func:`aces_bench.backends.copyout.copy_out`
(regular files only, never a FIFO, socket, device or link; 16 MB per file, a total and
a time cap), and what it cut or skipped is recorded in ``local-sandbox.json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import os
import pwd
import re
import subprocess
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities
from harbor.models.task.config import NetworkMode, TaskConfig
from harbor.models.task.paths import TaskPaths
from harbor.models.trial.paths import EnvironmentPaths

from aces_bench.backends import LOCAL_BACKEND
from aces_bench.backends.bwrap import DEFAULT_PIDS_LIMIT, SHM_SIZE_MB, Bind, Sandbox, isolation_plan
from aces_bench.backends.copyout import CopyBudget, CopyLimits, CopyReport, copy_out, sanitize_tree
from aces_bench.backends.dockerfile import (
    DEFAULT_PATH,
    CopyStep,
    DockerfilePlan,
    RunStep,
    WorkdirStep,
    is_archive,
    load_plan,
)
from aces_bench.backends.egress import EgressRelay, Endpoint, allowlist_endpoints, hosts_file, metered_endpoints
from aces_bench.backends.limits import TrialCgroup, TrialDisk, ram_backed, sweep_stale
from aces_bench.backends.provenance import PROVENANCE_FILE, SandboxProvenance, read_sandbox_provenance, security_note
from aces_bench.backends.rootfs import PrivateRoot, make_skeleton, owner_ids, python_alias_binds
from aces_bench.core import io
from aces_bench.core.errors import BackendError, ReportError

IMPORT_PATH = LOCAL_BACKEND  # named in the package, so the config layer need not load this module
HOSTNAME = "aces-sandbox"
# What the copy-outs of one trial may leave on the host when no disk limit says less.
DEFAULT_COPY_TOTAL_MB = 512
VERIFIER_HOME = "/aces-verifier-home"  # top level: no link the agent left can be on the way


def preflight(task_dir: Path) -> DockerfilePlan:
    """Check, before any trial runs, that backend=local can build this Harbor task.

    Returns the Dockerfile plan; raises BackendError naming the file and line of the
    first thing the local backend cannot honour. Harbor itself only reports these
    when the trial starts, as that trial's failure.
    """
    paths = TaskPaths(Path(task_dir))
    try:
        config = TaskConfig.model_validate_toml(paths.config_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot read the task config: {exc}", where=paths.config_path) from exc
    return load_plan(paths.environment_dir, config.environment.docker_image)


class LocalSandboxEnvironment(BaseEnvironment):
    """A Harbor environment backed by one bubblewrap sandbox per trial (module doc).

    Extra keyword arguments (``EnvironmentConfig.kwargs``):

    - ``auto_mounting`` (default True): bind the trial's log dirs into the sandbox, so
      Harbor needs no downloads. False makes them plain dirs that Harbor downloads.
    - ``default_network`` (default False): give network to tasks that leave
      ``[environment].network_mode`` unset (Harbor's default there is public).
    - ``tool_mounts``: host folders shown read-only in every trial, each
      ``{"source": host dir, "target": sandbox dir, "path": sandbox dir to put first
      on PATH}``: the agent CLIs ``aces-bench agents install`` provisions.
    - ``egress_urls``: URLs (the model's base URL) whose host:port the sandbox may
      reach when the task's network policy is Harbor's ``allowlist`` (Harbor allowlists
      an installed agent's model host under ``no-network``); see
      :mod:`aces_bench.backends.egress`.
    - ``root_parent``: host dir for the private roots. Default ``/dev/shm`` when
      writable (tmpfs: on this kind of host removing a root from ext4 costs ~50 ms, a
      third of a trial), else the system temp dir. Roots hold only staged inputs and
      what the commands write, and are removed at stop. Files written there count
      against the trial's memory limit. The root is a tmpfs of ``storage_mb`` when
      the task sets one, else (on RAM-backed storage) of ``memory_mb``; with such a
      cap the trial's ``/logs`` dirs are kept inside it instead of bound (Harbor
      downloads them; ``stop`` copies out the rest).
    - ``require_limits`` (default False): refuse to start a trial whose memory/CPU/disk
      limits (``[environment].memory_mb`` / ``cpus`` / ``storage_mb``) this host cannot
      enforce; by default such a trial runs and ``local-sandbox.json`` says the limits
      were not enforced (:mod:`aces_bench.backends.limits`).
    - ``pids_limit`` (default ``bwrap.DEFAULT_PIDS_LIMIT``): processes and threads the
      trial may have at once (a pids cgroup); None or 0: no limit.
    - ``require_isolation`` (default False): refuse to start a trial when this host
      cannot give one of the sandbox's protections (user namespace, seccomp, process
      limit); by default the trial runs and records which one is missing and why.
    - ``copy_max_file_mb`` (default 16) and ``copy_max_total_mb`` (default 512, or the
      disk limit when smaller): what one file, and all the trial's files, may bring to
      the host through copy-outs; a file past the first is cut, the cut recorded.
    """

    def __init__(
        self,
        *args,
        auto_mounting: bool = True,
        default_network: bool = False,
        root_parent: str | None = None,
        tool_mounts: list[dict[str, str]] | None = None,
        egress_urls: list[str] | None = None,
        require_limits: bool = False,
        pids_limit: int | None = DEFAULT_PIDS_LIMIT,
        require_isolation: bool = False,
        copy_max_file_mb: float = 16,
        copy_max_total_mb: float = DEFAULT_COPY_TOTAL_MB,
        **kwargs,
    ):
        self._pids_limit = int(pids_limit) if pids_limit else None
        self._require_isolation = require_isolation
        self._copy_limits = CopyLimits(max_file_bytes=int(copy_max_file_mb * 2**20))
        self._copy_total_mb = copy_max_total_mb
        self._copy_report = CopyReport()
        self._verifier_phase = False  # /tests was uploaded: this sandbox runs the verifier
        self._ran_since_tests = False  # a command ran since the last /tests upload (multi-step trials)
        self._egress_urls = list(egress_urls or [])
        self._egress: EgressRelay | None = None
        self._written_binds: tuple[Path, ...] | None = None  # set in start (copy-out)
        self._cgroup: TrialCgroup | None = None
        self._disk: TrialDisk | None = None
        # (sandbox path, host dir) of the /logs dirs kept inside the capped root (copied out).
        self._logs_in_root: tuple[tuple[str, Path], ...] = ()
        self._copy_budget: CopyBudget | None = None  # what the copy-outs may leave on the host
        self._copy_out_error: BackendError | None = None
        self._require_limits = require_limits
        self._default_network = default_network
        self._tool_binds, self._tool_path = tool_binds(tool_mounts or [])
        self._root_parent = root_parent
        self._plan: DockerfilePlan | None = None
        self._sandbox: Sandbox | None = None
        self._root: PrivateRoot | None = None
        self.private_root: Path | None = None
        self.provenance: SandboxProvenance | None = None
        super().__init__(*args, auto_mounting=auto_mounting, **kwargs)

    @staticmethod
    def type() -> str:
        return "aces-local"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities(
            disable_internet=True,
            mounted=True,
            network_allowlist=True,
            network_allowlist_hostnames=True,
            network_allowlist_ipv4_addresses=True,
        )

    def _validate_definition(self):
        # Dockerfile problems are raised in start(): raised here (inside Trial creation)
        # they would abort the whole Harbor job instead of failing this one trial.
        # Runners that want them up front call preflight() on each task dir.
        pass

    # -- properties reports and tests read -----------------------------------------
    @property
    def network_enabled(self) -> bool:
        """Whether the sandbox gets the host's network (only on an explicit request)."""
        if self._network_policy.network_mode != NetworkMode.PUBLIC:
            return False
        return self._default_network or "network_mode" in self.task_env_config.model_fields_set

    @property
    def workdir(self) -> str:
        if self.task_env_config.workdir:
            return self.task_env_config.workdir
        return self._plan.workdir if self._plan else "/"

    @property
    def sandbox(self) -> Sandbox | None:
        return self._sandbox

    # -- lifecycle -----------------------------------------------------------------
    async def start(self, force_build: bool) -> None:
        """Build the private root from the Dockerfile and start the sandbox."""
        self._plan = load_plan(self.environment_dir, self.task_env_config.docker_image)
        parent = self._root_parent or _default_root_parent()
        sweep_stale()  # before the roots: a killed run's root may still be a mount point
        sweep_orphaned_roots(parent)
        self.private_root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-", dir=parent))
        try:
            plan = await asyncio.to_thread(isolation_plan)
            self._disk = self._mount_disk(parent)
            # /logs is never a bind of the host's trial dir: what the trial writes there
            # reaches the host only through capped, FIFO-proof copies (copyout.copy_out).
            self._keep_logs_in_root(self._disk_size(parent))
            make_skeleton(self.private_root)
            endpoints = self._allowed_endpoints()
            binds = (*self._binds(), *self._tool_binds, *python_alias_binds(self.private_root),
                     *egress_binds(self.private_root, endpoints))
            self._binds_in_use = binds
            self._root = root = PrivateRoot(self.private_root, binds, workdir=self.workdir, owner=plan.owner)
            self._guard_trial_dir(binds)
            for target in self._mount_targets():
                if not any(b.target == PurePosixPath(target) for b in binds):
                    root.mkdirs(str(target))
            self._cgroup = self._make_cgroup()
            self._sandbox = self._new_sandbox()
            await self._sandbox.prepare()
            self._refuse_missing_isolation(self._sandbox.missing)
            await self._sandbox.start()
            if endpoints:
                self._egress = self._relay(endpoints)
                await self._egress.start()
            await self._apply_plan(self._plan)
            paths = EnvironmentPaths.for_os(self.os)
            for path in (self.workdir, str(paths.tests_dir), self.task_env_config.skills_dir):
                if path:
                    root.mkdirs(path)
        except BaseException:
            await self._teardown(delete=True)
            raise
        missing = dict(self._sandbox.missing)
        self.provenance = SandboxProvenance(
            isolation=_bwrap_version(),
            security_note=security_note(missing),
            dockerfile=str(self._plan.path),
            from_image=self._plan.base_image,
            userland=f"host: {_host_os_name()}",
            network=self._network_label(),
            private_root=str(self.private_root),
            resource_limits_enforced=self._cgroup is not None and bool(self._cgroup.memory_mb or self._cgroup.cpus),
            resource_limits=self._cgroup.label if self._cgroup is not None else self._unenforced_label(),
            limits=self._limits_in_force(),
            protections=dict(self._sandbox.protections),
            missing_protections=missing,
        )
        if self._is_verifier_env:
            await asyncio.to_thread(self._record_as_verifier)
        else:
            # In a thread: the atomic write fsyncs, which would stall concurrent trials.
            await asyncio.to_thread(io.write_json, self.trial_paths.trial_dir / PROVENANCE_FILE, self.provenance)
        self.logger.debug(
            f"local sandbox: FROM {self._plan.base_image} is recorded only; commands run on "
            f"the host's userland ({_host_os_name()}), network {self.provenance.network}, "
            f"private root {self.private_root}"
        )
        self.logger.debug(f"local sandbox: {self.provenance.security_note}")

    async def stop(self, delete: bool):
        """Kill every process of the sandbox; remove the private root when ``delete``."""
        await self._teardown(delete=delete)
        await asyncio.to_thread(self._release_trial_dir)
        if self._copy_report and self.provenance is not None:
            await asyncio.to_thread(self._record_copies)
        if not delete and self.private_root is not None:
            self.logger.debug(f"local sandbox: kept private root {self.private_root}")
        if self._copy_out_error is not None:  # Harbor records it: the trial is errored, counted
            error, self._copy_out_error = self._copy_out_error, None
            raise error

    # -- isolation (bwrap.py) and the verifier's own sandbox --------------------------
    def _new_sandbox(self) -> Sandbox:
        return Sandbox(self.private_root, self._binds_in_use, network=self.network_enabled, hostname=HOSTNAME,
                       cgroup=self._cgroup, pids_limit=self._pids_limit)

    def _refuse_missing_isolation(self, missing: dict[str, str]) -> None:
        """With ``require_isolation``, a protection this host cannot give stops the trial."""
        if missing and self._require_isolation:
            raise BackendError(
                "the local sandbox cannot give every protection on this host: "
                + "; ".join(f"{k}: {v}" for k, v in missing.items()),
                where="backend.kwargs.require_isolation",
                fix="run where user namespaces, libseccomp and a pids cgroup are available, drop "
                "require_isolation (the trial then records what is missing), or use a VM-isolated backend",
            )

    @property
    def _is_verifier_env(self) -> bool:
        """Whether Harbor made this environment for a separate verifier (its session id says so)."""
        return "__verifier__" in self.session_id

    def _record_as_verifier(self) -> None:
        """A separate verifier's sandbox: say so in the trial's record (the agent's one) beside its own."""
        path = self.trial_paths.trial_dir / PROVENANCE_FILE
        try:
            prov = read_sandbox_provenance(path)
        except ReportError:
            prov = self.provenance
        missing = {**prov.missing_protections,
                   **{f"verifier {k}": v for k, v in self.provenance.missing_protections.items()}}
        how = ("separate sandbox: the agent's sandbox and every process in it ended first; a fresh root "
               "from the Dockerfile received the agent's workspace as copied data")
        io.write_json(path, prov.model_copy(update={"verifier": how, "missing_protections": missing,
                                                    "security_note": security_note(missing)}))

    def _record_copies(self) -> None:
        """Add what this sandbox's copy-outs cut or skipped to the trial's ``local-sandbox.json``."""
        path = self.trial_paths.trial_dir / PROVENANCE_FILE
        try:
            prov = read_sandbox_provenance(path)
        except ReportError:
            return
        record = self._copy_report.as_record()
        old = prov.copy_out or {}
        if old:
            record = {
                "max_file_bytes": record["max_file_bytes"],
                "n_truncated": old.get("n_truncated", 0) + record["n_truncated"],
                "truncated": [*old.get("truncated", []), *record["truncated"]][:50],
                "n_skipped": old.get("n_skipped", 0) + record["n_skipped"],
                "skipped": [*old.get("skipped", []), *record["skipped"]][:50],
                "stopped": [*old.get("stopped", []), *record["stopped"]],
            }
        io.write_json(path, prov.model_copy(update={"copy_out": record}))
        self._copy_report = CopyReport()

    async def _enter_verifier_phase(self) -> None:
        """End every agent process before the verifier's files arrive (Harbor's shared verifier).

        The sandbox is stopped (its PID namespace killed: daemons included) and a fresh
        one started on the same root; reward files written since Harbor removed them are
        removed again, ``/tests`` is emptied (nothing the agent left there is imported by
        the tests) and verifier commands get a fresh ``HOME``.
        """
        if self._sandbox is None or (self._verifier_phase and not self._ran_since_tests):
            return  # a second upload of the same verification (tests/ and a step's tests/)
        self._verifier_phase = True
        self._ran_since_tests = False
        if self._egress is not None:
            await self._egress.stop()
        await self._sandbox.stop()
        root = self._require_root()
        # Harbor removed the reward files before this upload, but until the stop above a
        # daemon of the agent could write them again; a test.sh that then failed to
        # write its own reward would leave the agent's. Every agent process is gone now.
        env_paths = EnvironmentPaths.for_os(self.os)
        for reward in (env_paths.reward_text_path, env_paths.reward_json_path):
            await asyncio.to_thread(io.remove_tree, self.private_root / str(reward).lstrip("/"))
        for reward in (self.trial_paths.reward_text_path, self.trial_paths.reward_json_path):
            await asyncio.to_thread(io.remove_tree, reward)
        tests = str(env_paths.tests_dir)
        for path in (tests, VERIFIER_HOME):
            await asyncio.to_thread(_empty_dir, self.private_root, path)
            root.mkdirs(path)
        self._sandbox = self._new_sandbox()
        await self._sandbox.start()
        if self._egress is not None:
            self._egress = self._relay(self._egress.endpoints)
            await self._egress.start()
        if not self._is_verifier_env:
            self._note_verifier("shared sandbox restarted: every agent process ended before the verifier; "
                                "/tests emptied, a fresh HOME for its commands")

    def _note_verifier(self, how: str) -> None:
        if self.provenance is None:
            return
        self.provenance = self.provenance.model_copy(update={"verifier": how})
        io.write_json(self.trial_paths.trial_dir / PROVENANCE_FILE, self.provenance)

    # -- resource limits (limits.py) ---------------------------------------------
    def _make_cgroup(self) -> TrialCgroup | None:
        """The trial's cgroup with the task's memory and CPU limits; None when not enforceable.

        With ``require_limits`` an unenforceable limit is a BackendError (the trial
        does not start) instead of a run recorded as unlimited.
        """
        memory, cpus = self.task_env_config.memory_mb, self.task_env_config.cpus
        cgroup = TrialCgroup.create(self.private_root.name, memory_mb=memory, cpus=cpus, pids=self._pids_limit)
        if cgroup is None and self._pids_limit and (memory or cpus):
            # A host with the memory/cpu controllers but no pids one: the limits it can give.
            cgroup = TrialCgroup.create(self.private_root.name, memory_mb=memory, cpus=cpus)
        if cgroup is None and (memory or cpus):
            if self._require_limits:
                raise BackendError(
                    f"memory_mb={memory} / cpus={cpus} cannot be enforced: no writable cgroup (v2 or v1) "
                    "with the memory and cpu controllers on this host",
                    fix="run where cgroups are delegated (root, or a systemd user slice), drop "
                    "backend.kwargs.require_limits, or use backend=docker",
                )
            self.logger.warning(f"local sandbox: {self._unenforced_label()}")
        return cgroup

    def _disk_size(self, parent: str) -> int | None:
        """The private root's size cap: storage_mb, else memory_mb on RAM-backed storage."""
        cfg = self.task_env_config
        if cfg.storage_mb:
            return cfg.storage_mb
        return cfg.memory_mb if cfg.memory_mb and ram_backed(parent) else None

    def _mount_disk(self, parent: str) -> TrialDisk | None:
        """The size-limited tmpfs at the private root, or None (no cap asked, or not possible)."""
        size = self._disk_size(parent)
        if not size:
            return self._mount_view_only(parent)
        disk = TrialDisk.mount(self.private_root, size)
        if disk is None and self.task_env_config.storage_mb:
            if self._require_limits:
                raise BackendError(
                    f"storage_mb={size} cannot be enforced: this process may not mount a tmpfs "
                    "(needs CAP_SYS_ADMIN)",
                    fix="run aces-bench as root, drop backend.kwargs.require_limits, or use backend=docker",
                )
            self.logger.warning(f"local sandbox: disk limit storage_mb={size} not enforced (cannot mount a tmpfs)")
        return disk

    def _mount_view_only(self, parent: str) -> TrialDisk | None:
        """A tmpfs as large as ``parent`` at a RAM-backed private root with no cap asked.

        The root is RAM either way; as a file system of its own it shows in the sandbox's
        mountinfo as ``/`` of a tmpfs, where a bind of the dir would show its host path
        (which carries the host pid). Not a limit: the parent's own size bounds it already.
        """
        if not ram_backed(parent):
            return None
        st = os.statvfs(parent)
        return TrialDisk.mount(self.private_root, max(1, st.f_blocks * st.f_frsize // 2**20), capped=False)

    def _keep_logs_in_root(self, cap_mb: int | None) -> None:
        """Put the trial's /logs dirs inside the private root instead of binding them.

        Bound, they would be host folders the trial writes in place: a script writing
        into /logs/artifacts could fill the host's disk past storage_mb, and a FIFO or a
        link it leaves there would be opened by the host's own readers (Harbor reads
        the trajectory; a FIFO there once hung a whole study). Unbound, Harbor sees
        them as not mounted (``is_path_mounted`` reads ``_host_mounts``) and downloads
        them through ``download_dir`` after each phase, as it does for a remote
        environment; ``stop`` copies out whatever is left. A run killed with SIGKILL
        loses only this trial's logs (the trial has no result and is redone on resume);
        its tmpfs is unmounted by the next run's sweep. What all copy-outs of the trial
        leave on the host is held to the cap too (a file deleted inside after a download
        stays on the host): a copy past it is refused and the trial errored, naming it.
        """
        paths = EnvironmentPaths.for_os(self.os)
        targets = {str(paths.agent_dir), str(paths.verifier_dir), str(paths.artifacts_dir)}
        trial_dir = self.trial_paths.trial_dir.resolve()
        kept, moved = [], []
        for mount in self._host_mounts:
            source = Path(mount["source"]).resolve()
            if str(mount["target"]) in targets and mount["type"] == "bind" and source.is_relative_to(trial_dir):
                source.mkdir(parents=True, exist_ok=True)
                moved.append((str(mount["target"]), source))
            else:
                kept.append(mount)
        self._host_mounts = kept
        self._logs_in_root = tuple(moved)
        total = self._copy_total_mb if not cap_mb else min(cap_mb, self._copy_total_mb)
        self._copy_budget = CopyBudget(int(total * 2**20))
        self._budget_is_disk = bool(cap_mb) and cap_mb <= self._copy_total_mb

    def _over_budget(self, over: list[str]) -> BackendError:
        """The error for copy-outs that would leave more than the disk limit on the host."""
        budget = self._copy_budget
        limit = (f"its {budget.limit // 2**20} MB disk limit" if self._budget_is_disk
                 else f"the {budget.limit // 2**20} MB copy-out limit")
        return BackendError(
            f"the trial wrote more to /logs than {limit} over the run: "
            f"{len(over)} file(s) not copied out ({', '.join(over[:3])}); "
            f"{budget.used / 2**20:.1f} MB copied",
            fix="raise workspace.storage_mb if the task needs more space" if self._budget_is_disk
            else "raise backend.kwargs.copy_max_total_mb if the task needs more",
        )

    def _copy_out_logs(self) -> None:
        """At stop (the sandbox is gone): copy the /logs dirs from the root to the trial dir.

        Files Harbor already downloaded (or wrote on the host) are kept; the rest is
        copied as plain data. Links are never followed out of the root.
        """
        if self.private_root is None or not self.private_root.is_dir():
            return
        verifier_dir = str(EnvironmentPaths.for_os(self.os).verifier_dir)
        for target, source in self._logs_in_root:
            if target == verifier_dir and not self._verifier_phase:
                continue  # the agent has no business there: only a sandbox that verified copies it
            inside = self.private_root / target.lstrip("/")
            if inside.is_symlink() or not inside.is_dir():
                self.logger.warning(f"local sandbox: {target} is not a directory at stop; nothing copied out")
                continue
            over = copy_out(inside, source, budget=self._copy_budget, limits=self._copy_limits,
                            report=self._copy_report, protect=self._host_written, label=target)
            if over and self._copy_out_error is None:
                self._copy_out_error = self._over_budget(over)

    def _host_written(self, dst: Path) -> bool:
        """Whether a host file exists that no copy-out of this trial made: Harbor's or a host agent's own."""
        return dst not in self._copy_budget.sizes if self._copy_budget is not None else True

    def _limits_in_force(self) -> dict[str, str]:
        """Each limit as it was applied to this trial (the report's run conditions)."""
        cfg, cg = self.task_env_config, self._cgroup
        def one(asked, enforced: bool, unit: str, how: str) -> str:
            if not asked:
                return "none set"
            return f"{asked:g} {unit} ({how})" if enforced else f"not enforced ({asked:g} {unit} asked)"
        cg_how = f"cgroup v{cg.version}" if cg else ""
        out = {
            "memory": one(cfg.memory_mb, cg is not None and bool(cg.memory_mb), "MB", cg_how),
            "cpus": one(cfg.cpus, cg is not None and bool(cg.cpus), "CPU", cg_how),
        }
        if self._disk is not None and self._disk.capped:
            how = "tmpfs" if cfg.storage_mb else "tmpfs capped at memory_mb: no storage_mb set"
            logs = "; /logs inside it, copied out" if self._logs_in_root else ""
            out["disk"] = f"{self._disk.size_mb} MB ({how}{logs})"
        else:
            out["disk"] = one(cfg.storage_mb, False, "MB", "")
        out["network"] = self._network_label()
        if cg is not None and cg.pids:
            out["processes"] = f"{cg.pids} (cgroup v{cg.version})"
        else:
            out["processes"] = "not enforced (no pids cgroup)" if self._pids_limit else "none set"
        missing = self._sandbox.missing if self._sandbox is not None else {}
        out["isolation"] = (f"user namespace with its own kernel counts, no capabilities, no_new_privs, seccomp, "
                            f"its own {SHM_SIZE_MB} MB /dev/shm" if not missing
                            else "missing: " + ", ".join(missing))
        return out

    def _unenforced_label(self) -> str:
        memory, cpus = self.task_env_config.memory_mb, self.task_env_config.cpus
        if not memory and not cpus:
            return "none set"
        return f"not enforced (memory {memory} MB, cpus {cpus} asked; no writable cgroup on this host)"

    # -- copy-out: what the trial wrote to the host is plain data (copyout.py) ------
    def _guard_trial_dir(self, binds: tuple[Bind, ...]) -> None:
        """Close the trial dir to other host users while the sandbox can write into it.

        Harbor makes the trial's log dirs 0777 (for a non-root user inside); what a
        trial writes there is only made plain data at stop, so until then the trial dir
        itself is 0700. Remembers which writable binds are the trial's own dirs.
        """
        trial_dir = self.trial_paths.trial_dir.resolve()
        self._written_binds = tuple(
            b.source for b in binds if not b.read_only and b.source.is_relative_to(trial_dir)
        ) + tuple(source for _, source in self._logs_in_root)
        os.chmod(trial_dir, 0o700)

    def _release_trial_dir(self) -> None:
        """After the sandbox is gone: sanitise what it wrote, then reopen the trial dir (0755)."""
        if self._written_binds is None:
            return
        trial_dir = self.trial_paths.trial_dir.resolve()
        for source in self._written_binds:
            sanitize_tree(source)
            # Harbor's 0777 on the dirs between the trial dir and its mount points too.
            for parent in source.parents:
                if parent == trial_dir or not parent.is_relative_to(trial_dir):
                    break
                if parent.is_dir() and not parent.is_symlink():
                    os.chmod(parent, 0o755)
        if trial_dir.is_dir():
            os.chmod(trial_dir, 0o755)

    def _allowed_endpoints(self) -> tuple[Endpoint, ...]:
        """The endpoints an ``allowlist`` policy lets the sandbox reach (none otherwise)."""
        if self._network_policy.network_mode != NetworkMode.ALLOWLIST:
            return ()
        return allowlist_endpoints(list(self._network_policy.allowed_hosts), self._egress_urls)

    def _relay(self, endpoints: tuple[Endpoint, ...]) -> EgressRelay:
        """The sandbox's way out to ``endpoints``; a plain-HTTP model endpoint through a
        metering proxy recording into this trial's dir (``aces_bench.backends.meter``)."""
        assert self._sandbox is not None
        return EgressRelay(self._sandbox.pid, endpoints, metered=metered_endpoints(self._egress_urls),
                           trial_dir=self.trial_paths.trial_dir)

    def _network_label(self) -> str:
        if self._egress is not None:
            return "allowlist: " + ", ".join(str(ep) + (" (metered)" if ep in self._egress.metered else "")
                                             for ep in self._egress.endpoints)
        return "on" if self.network_enabled else "off"

    async def _teardown(self, *, delete: bool) -> None:
        if self._egress is not None:
            await self._egress.stop()
            self._egress = None
        if self._sandbox is not None:
            await self._sandbox.stop()
            self._sandbox = None
        if self._logs_in_root:
            await asyncio.to_thread(self._copy_out_logs)
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        self._root = None
        if delete and self._disk is not None:
            self._disk.unmount()  # its contents go with it
            self._disk = None
        if delete and self.private_root is not None and self.private_root.exists():
            await asyncio.to_thread(io.remove_tree, self.private_root, ignore_errors=True)
            if self.private_root.exists():
                self.logger.warning(f"local sandbox: could not remove {self.private_root}")

    def _binds(self) -> tuple[Bind, ...]:
        binds = []
        for mount in self._host_mounts:
            if mount["type"] != "bind":
                raise BackendError(
                    f"mount type {mount['type']!r} for {mount['target']} is not supported by "
                    "backend=local (only host bind mounts)",
                    fix="use a bind mount or run this task with backend=docker",
                )
            source = Path(mount["source"])
            # Like `docker run -v`, a missing host dir is created (Harbor's log dirs).
            source.mkdir(parents=True, exist_ok=True)
            if not source.is_dir():
                raise BackendError(
                    f"bind mount source {source} (for {mount['target']}) is not a directory on the host",
                    fix="point the mount at a directory",
                )
            binds.append(Bind(source.resolve(), PurePosixPath(mount["target"]), bool(mount.get("read_only"))))
        return tuple(binds)

    async def _apply_plan(self, plan: DockerfilePlan) -> None:
        for step in plan.steps:
            if isinstance(step, WorkdirStep):
                self._require_root().mkdirs(step.path, where=f"{plan.path}:{step.line}")
            elif isinstance(step, CopyStep):
                with self._disk_full_named(f"{plan.path}:{step.line}"):
                    self._apply_copy(plan, step)
            elif isinstance(step, RunStep):
                await self._apply_run(plan, step)

    def _apply_copy(self, plan: DockerfilePlan, step: CopyStep) -> None:
        where = f"{plan.path}:{step.line}"
        root = self._require_root()
        owner = owner_ids(step.chown, where) if step.chown else None
        for rel in step.sources:
            source = plan.context / rel
            if step.extract_archives and is_archive(source):
                with tempfile.TemporaryDirectory() as tmp, tarfile.open(source) as archive:
                    archive.extractall(tmp, filter="data")
                    root.copy_in(Path(tmp), step.dest, where=where, chmod=step.chmod, owner=owner)
                continue
            dest = step.dest
            if source.is_file() and (step.into_dir or root.is_dir(dest)):
                dest = str(PurePosixPath(dest) / source.name)
            root.copy_in(source, dest, where=where, chmod=step.chmod, owner=owner)

    async def _apply_run(self, plan: DockerfilePlan, step: RunStep) -> None:
        env = {"HOME": "/root", "HOSTNAME": HOSTNAME, **step.env}
        self._require_root().mkdirs(step.workdir, where=f"{plan.path}:{step.line}")
        out = await self._require_sandbox().exec(
            ["/bin/sh", "-c", step.command],
            cwd=step.workdir,
            env=env,
            isolate_network=self.network_enabled,
        )
        if out.return_code != 0:
            text = (out.stdout + out.stderr).decode(errors="replace").strip().splitlines()
            tail = "\n    ".join(text[-15:]) or "(no output)"
            raise BackendError(
                f"RUN failed with exit code {out.return_code} in the local sandbox "
                f"(no network, host userland):\n    {tail}",
                where=f"{plan.path}:{step.line}",
                fix="make the command work offline on the host's tools, or run this task with backend=docker",
            )

    # -- exec ----------------------------------------------------------------------
    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        """Run ``command`` with ``bash -c`` in the sandbox.

        Raises a RuntimeError ("Command timed out after N seconds", as Harbor's docker
        environment does) after killing the command's process group on timeout.
        """
        self._ran_since_tests = True
        uid, gid, home = _identity(self._resolve_user(user))
        if self._verifier_phase:
            home = VERIFIER_HOME
        base = {"PATH": DEFAULT_PATH, "HOME": home, "HOSTNAME": HOSTNAME}
        full_env = {**base, **(self._plan.env if self._plan else {}), **(self._merge_env(env) or {})}
        if self._tool_path:
            full_env["PATH"] = ":".join([*self._tool_path, full_env.get("PATH") or DEFAULT_PATH])
        # Always absolute: a relative cwd would resolve against nsenter's host cwd.
        workdir = str(PurePosixPath(self.workdir) / (cwd or "."))
        out = await self._require_sandbox().exec(
            ["/bin/bash", "-c", command],
            cwd=workdir,
            env=full_env,
            timeout_sec=timeout_sec,
            uid=uid,
            gid=gid,
        )
        stdout = out.stdout.decode(errors="replace") or None
        stderr = out.stderr.decode(errors="replace") or None
        callback = self._output_callback()
        if callback is not None:
            for text, stream in ((stdout, "stdout"), (stderr, "stderr")):
                if text:
                    await callback(text, stream)
        return ExecResult(stdout=stdout, stderr=stderr, return_code=out.return_code)

    def _require_sandbox(self) -> Sandbox:
        if self._sandbox is None:
            raise BackendError(
                "the local sandbox is not started",
                fix="call start() before exec/upload/download (Harbor does this itself)",
            )
        return self._sandbox

    # -- file transfer -------------------------------------------------------------
    async def upload_file(self, source_path: Path | str, target_path: str):
        if self._is_tests_path(target_path):
            await self._enter_verifier_phase()
        with self._disk_full_named(target_path):
            await asyncio.to_thread(self._require_root().copy_in, Path(source_path), target_path)

    async def upload_dir(self, source_dir: Path | str, target_dir: str):
        source = Path(source_dir)
        if not source.is_dir():
            raise BackendError(f"upload source {source} is not a directory")
        if self._is_tests_path(target_dir):
            await self._enter_verifier_phase()
        with self._disk_full_named(target_dir):
            await asyncio.to_thread(self._require_root().copy_in, source, target_dir)

    def _is_tests_path(self, path: str) -> bool:
        """Whether ``path`` is Harbor's /tests (uploaded for the verifier only)."""
        tests = PurePosixPath(str(EnvironmentPaths.for_os(self.os).tests_dir))
        target = PurePosixPath(path)
        return target == tests or tests in target.parents

    @contextlib.contextmanager
    def _disk_full_named(self, target: str):
        """An upload into a private root the trial filled says so, naming the limit."""
        try:
            yield
        except OSError as exc:
            if exc.errno != errno.ENOSPC or self._disk is None:
                raise
            raise BackendError(
                f"cannot copy to {target}: no space left on the trial's {self._disk.size_mb} MB disk "
                "(the private root's tmpfs)",
                fix="raise workspace.storage_mb if the task needs more space",
            ) from exc

    async def download_file(self, source_path: str, target_path: Path | str):
        """Copy a file out as plain data: regular files only, cut at the per-file cap, budgeted."""
        if self._root is None and self.private_root is not None:
            # Harbor's best-effort artifact pass after a trial cancelled in start(): the
            # sandbox never held anything (an error here is logged with a traceback).
            self.logger.debug(f"local sandbox: not started; {source_path} not downloaded")
            return
        root = self._require_root()
        target = Path(target_path).resolve()
        over = await asyncio.to_thread(root.download_file, source_path, target, limits=self._copy_limits,
                                       report=self._copy_report, budget=self._copy_budget)
        if over:
            raise self._over_budget(over)

    async def download_dir(self, source_dir: str, target_dir: Path | str):
        """Copy a tree out as plain data (:func:`copyout.copy_out`): never a FIFO, socket,
        device or followed link; capped per file, in entries, in time and by the budget.

        A host file this trial's copies did not make (Harbor's, a host-side agent's
        trajectory) is never replaced by one from the sandbox.
        """
        if self._root is None and self.private_root is not None:
            self.logger.debug(f"local sandbox: not started; {source_dir} not downloaded")
            return
        root = self._require_root()
        target = Path(target_dir).resolve()
        over = await asyncio.to_thread(root.download_dir, source_dir, target, limits=self._copy_limits,
                                       report=self._copy_report, budget=self._copy_budget,
                                       protect=self._host_written)
        if over:
            raise self._over_budget(over)

    def _require_root(self) -> PrivateRoot:
        if self._root is None:
            raise BackendError(
                "the local sandbox is not started",
                fix="call start() before exec/upload/download (Harbor does this itself)",
            )
        return self._root


def _empty_dir(private_root: Path, path: str) -> None:
    """Make sandbox dir ``path`` (in the root itself, not a bind) an empty directory, links never followed."""
    host = private_root / path.lstrip("/")
    if host.is_symlink() or (os.path.lexists(host) and not host.is_dir()):
        host.unlink()
    elif host.is_dir():
        io.remove_tree(host)


def egress_binds(private_root: Path, endpoints: tuple[Endpoint, ...]) -> tuple[Bind, ...]:
    """The sandbox's own /etc/hosts mapping allowlisted hostnames to the relay (127.0.0.1)."""
    if not endpoints:
        return ()
    path = private_root / "etc" / "hosts"  # hidden under the read-only /etc inside
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hosts_file(endpoints))
    return (Bind(path, PurePosixPath("/etc/hosts"), read_only=True),)


def tool_binds(mounts: list[dict[str, str]]) -> tuple[tuple[Bind, ...], tuple[str, ...]]:
    """Read-only binds and PATH entries for the ``tool_mounts`` kwarg (class doc).

    Raises BackendError naming the entry when a source is not a host directory or a
    target is not absolute.
    """
    binds, path = [], []
    for i, mount in enumerate(mounts):
        source, target = Path(str(mount.get("source", ""))), str(mount.get("target", ""))
        if not source.is_dir() or not target.startswith("/"):
            raise BackendError(
                f"tool_mounts[{i}]: source {source} must be a host directory and target {target!r} an absolute path",
                where="backend.kwargs.tool_mounts",
                fix="re-run `aces-bench agents install` or correct the entry",
            )
        binds.append(Bind(source.resolve(), PurePosixPath(target), read_only=True))
        if mount.get("path"):
            path.append(str(mount["path"]))
    return tuple(binds), tuple(path)


def _identity(user: str | int | None) -> tuple[int | None, int | None, str]:
    """(uid, gid, home) for ``user``; (None, None, "/root") for root.

    Users come from the host's /etc/passwd, which is also the sandbox's /etc.
    """
    if user is None or str(user) in ("root", "0"):
        return None, None, "/root"
    try:
        entry = pwd.getpwuid(int(user)) if str(user).isdigit() else pwd.getpwnam(str(user))
    except KeyError:
        if str(user).isdigit():
            return int(user), int(user), "/"
        raise BackendError(
            f"user {user!r} does not exist; backend=local runs on the host's /etc/passwd",
            fix="drop the user setting (commands run as root) or run this task with backend=docker",
        ) from None
    return entry.pw_uid, entry.pw_gid, entry.pw_dir


log = logging.getLogger(__name__)
ROOT_PREFIX = "aces-sandbox-"
_OWNED_ROOT = re.compile(rf"^{ROOT_PREFIX}(\d+)-")


@functools.cache
def sweep_orphaned_roots(parent: str) -> int:
    """Remove private roots whose owning process is gone (a run killed with SIGKILL).

    A root's name carries its owner's pid; a live owner (this or another run) keeps
    its roots. Once per process and parent: later roots belong to live trials.
    """
    removed = 0
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return 0
    for entry in entries:
        m = _OWNED_ROOT.match(entry.name)
        if m is None or not entry.is_dir(follow_symlinks=False) or io.pid_alive(int(m.group(1))):
            continue
        io.remove_tree(entry.path, ignore_errors=True)
        removed += 1
    if removed:
        log.info("local sandbox: removed %d private root(s) left by killed runs in %s", removed, parent)
    return removed


def _default_root_parent() -> str:
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else tempfile.gettempdir()


@functools.cache
def _bwrap_version() -> str:
    try:
        out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "bubblewrap"
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"


@functools.cache
def _host_os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return os.uname().sysname
