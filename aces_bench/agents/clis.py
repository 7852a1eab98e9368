"""Agent CLIs from npm, provisioned once into a cache and bind-mounted into trials.

``aces-bench agents install claude-code codex opencode`` runs ``npm install --prefix``
for each pinned package into ``<cache>/<name>-<version>/`` and writes a manifest
(``aces-agent.json``: package, version, the binary, what ``--version`` printed). A trial
of ``harness=claude-code`` then mounts that folder read-only at
``/opt/aces-agents/<name>`` and puts its ``.bin`` on the agent's PATH: nothing is
installed at trial time and no host agent home (``~/.claude``...) is involved.

The cache is ``$ACES_AGENT_CACHE`` or ``.aces-cache/agents`` under the current
directory (ignored by git).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from aces_bench.core import io
from aces_bench.core.errors import ConfigError, RunError

MANIFEST = "aces-agent.json"
MOUNT_ROOT = PurePosixPath("/opt/aces-agents")
CACHE_ENV = "ACES_AGENT_CACHE"


@dataclass(frozen=True)
class AgentCli:
    """An agent CLI published on npm, pinned."""

    name: str
    package: str
    version: str
    binary: str
    host_tools: tuple[str, ...] = ()  # run from the host's /usr inside the sandbox
    # Where Harbor's own install fetches the CLI from when it is not mounted (a container
    # or cloud backend): the hosts a preflight checks before any trial.
    install_hosts: tuple[str, ...] = ()


# Versions measured to run here (claude-code against Anthropic Messages, codex against
# the Responses API, opencode); bump together with the tests that drive them.
CLIS: dict[str, AgentCli] = {
    c.name: c
    for c in (
        AgentCli("claude-code", "@anthropic-ai/claude-code", "2.1.197", "claude",
                 install_hosts=("downloads.claude.ai",)),
        AgentCli("codex", "@openai/codex", "0.171.0", "codex",
                 install_hosts=("raw.githubusercontent.com", "nodejs.org", "registry.npmjs.org")),
        # opencode's skill tool shells out to ripgrep; offline it cannot download its own.
        AgentCli("opencode", "opencode-ai", "1.18.33", "opencode", host_tools=("rg",),
                 install_hosts=("raw.githubusercontent.com", "nodejs.org", "registry.npmjs.org")),
    )
}


class CliManifest(BaseModel):
    """What ``agents install`` put in one cache folder."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    name: str
    package: str
    version: str
    binary: str
    version_output: str
    installed_at: str

    @property
    def mount(self) -> PurePosixPath:
        return MOUNT_ROOT / self.name

    @property
    def bin_dir(self) -> PurePosixPath:
        """The folder to put on the agent's PATH inside the sandbox."""
        return self.mount / "node_modules" / ".bin"


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.cwd() / ".aces-cache" / "agents").resolve()


def cli_dir(cli: AgentCli, root: Path | None = None) -> Path:
    return (root or cache_root()) / f"{cli.name}-{cli.version}"


def get_cli(name: str, *, where: str = "harness.cli") -> AgentCli:
    try:
        return CLIS[name]
    except KeyError:
        raise ConfigError(f"unknown agent CLI {name!r}", where=where,
                          fix=f"use one of: {', '.join(CLIS)}") from None


def installed(name: str, root: Path | None = None) -> tuple[Path, CliManifest]:
    """The cache folder and manifest of an installed CLI; a RunError naming the fix if absent."""
    cli = get_cli(name)
    folder = cli_dir(cli, root)
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise RunError(
            f"the {cli.name} CLI ({cli.package}@{cli.version}) is not installed in the agent cache",
            where=folder,
            fix=f"run `aces-bench agents install {cli.name}` (or `make agents`); set {CACHE_ENV} to use another cache",
        )
    return folder, CliManifest.model_validate_json(manifest.read_text())


def provenance(name: str | None) -> dict[str, str]:
    """What a study records of the CLI ``name`` it ran: package, version, ``--version``
    output and folder; its state when it is not installed; nothing without a CLI."""
    if name is None:
        return {}
    try:
        folder, manifest = installed(name)
    except (ConfigError, RunError):  # the preflight refused a missing CLI already; provenance says so
        return {"name": name, "state": "not installed"}
    return {"name": manifest.name, "package": manifest.package, "version": manifest.version,
            "version_output": manifest.version_output, "path": str(folder)}


def install(name: str, root: Path | None = None, *, force: bool = False) -> CliManifest:
    """npm-install one pinned CLI into the cache (once) and return its manifest."""
    cli = get_cli(name)
    folder = cli_dir(cli, root)
    if not force and (folder / MANIFEST).is_file():
        return CliManifest.model_validate_json((folder / MANIFEST).read_text())
    npm = shutil.which("npm")
    if npm is None:
        raise RunError("npm is not installed; the agent CLIs come from the npm registry",
                       fix="install Node.js and npm (apt-get install nodejs npm)")
    tmp = folder.with_name(folder.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    argv = [npm, "install", "--prefix", str(tmp), "--no-audit", "--no-fund", "--loglevel=error",
            f"{cli.package}@{cli.version}"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RunError(f"npm install {cli.package}@{cli.version} failed: " + " | ".join(tail),
                       where=tmp, fix="check the npm registry settings (npm config get registry)")
    binary = tmp / "node_modules" / ".bin" / cli.binary
    probe = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        raise RunError(f"{binary} --version failed: {(probe.stderr or probe.stdout).strip()[-300:]}", where=tmp)
    output = probe.stdout.strip().splitlines()[-1] if probe.stdout.strip() else ""
    if cli.version not in output:
        raise RunError(f"{cli.binary} --version printed {output!r}, not version {cli.version}", where=tmp)
    manifest = CliManifest(name=cli.name, package=cli.package, version=cli.version, binary=cli.binary,
                           version_output=output, installed_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    io.write_json(tmp / MANIFEST, manifest)
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(tmp, folder)
    return manifest


def main(argv: list[str]) -> int:
    """``aces-bench agents install NAME... | list``."""
    usage = f"usage: aces-bench agents {{install,list}} [{'|'.join(CLIS)} ...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        return 0
    command, names = argv[0], argv[1:]
    if command == "list":
        for cli in CLIS.values():
            state = "installed" if (cli_dir(cli) / MANIFEST).is_file() else "not installed"
            print(f"{cli.name:<12} {cli.package}@{cli.version:<10} {state}  {cli_dir(cli)}")
        return 0
    if command != "install":
        print(f"error: unknown agents command {command!r}\n{usage}", file=sys.stderr)
        return 2
    for name in names or list(CLIS):
        get_cli(name, where="aces-bench agents install")
        start = time.monotonic()
        manifest = install(name)
        print(f"{manifest.name}: {manifest.package}@{manifest.version} ({manifest.version_output}) "
              f"in {cli_dir(get_cli(name))} [{time.monotonic() - start:.1f} s]")
        for tool in get_cli(name).host_tools:
            if shutil.which(tool) is None:
                print(f"warning: {name} needs `{tool}` on the host (the sandbox shows the host's /usr): "
                      "apt-get install ripgrep", file=sys.stderr)
    print(f"cache: {cache_root()}")
    return 0
