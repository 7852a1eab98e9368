"""A target skill's own environment: ``<skill>/evals/environment/``.

- ``Dockerfile``: the base of the emitted one. Its instructions come first, then the
  emitter's fixed tail (``WORKDIR``, ``COPY skills/``, ``COPY workspace/``), so the
  with-skill and baseline tasks of a case share every layer but the last COPYs.
  Its COPY sources are the other files of the folder (copied into the build context).
- ``docker-compose.yaml`` (or ``compose.yaml``): sidecars such as a mocked MCP server,
  emitted as-is for Docker and cloud backends. backend=local refuses Compose.
- ``mcp_servers.json`` / ``.yaml``: a list of MCP servers written to task.toml as
  ``[[environment.mcp_servers]]`` through Harbor's ``MCPServerConfig``; not copied.

Without the folder (or with ``workspace.custom_environment=false``) the emitted
Dockerfile is ``FROM workspace.base_image`` and the fixed tail.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml
from harbor.models.task.config import MCPServerConfig
from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench.core.errors import EmitError, from_validation
from aces_bench.core.io import load_yaml, yaml_problem
from aces_bench.inputs.skills import Skill, iter_files

ENV_DIR = "evals/environment"
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
MCP_FILES = ("mcp_servers.json", "mcp_servers.yaml", "mcp_servers.yml")
RESERVED = ("skills", "workspace")


class CustomEnvironment(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    source: Path
    dockerfile: str | None
    """The author's Dockerfile text (None: the default base)."""
    context: dict[str, bytes]
    """Build-context files (Compose file included) by environment-relative path."""
    mcp_servers: tuple[MCPServerConfig, ...]
    compose_file: str | None
    content_hash: str


def _read_mcp(path: Path) -> tuple[MCPServerConfig, ...]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except json.JSONDecodeError as exc:
        raise EmitError(f"cannot parse MCP server declarations: {exc}", where=path,
                        fix="write a list of {name, transport, url | command, args}") from None
    except yaml.YAMLError as exc:
        raise EmitError(f"cannot parse MCP server declarations: {yaml_problem(exc)}", where=path,
                        fix="write a list of {name, transport, url | command, args}") from None
    if isinstance(data, dict) and "mcp_servers" in data:
        data = data["mcp_servers"]
    if not isinstance(data, list):
        raise EmitError("MCP server declarations must be a list", where=path,
                        fix="write a list of {name, transport, url | command, args}")
    servers = []
    for i, entry in enumerate(data):
        try:
            servers.append(MCPServerConfig.model_validate(entry))
        except ValidationError as err:
            raise from_validation(err, cls=EmitError, where=path, prefix=f"[{i}]",
                                  fix="see Harbor's MCPServerConfig: name, transport (sse, streamable-http, stdio), "
                                  "url for HTTP transports, command/args for stdio") from None
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise EmitError("two MCP servers share a name", where=path, fix="give each server a unique name")
    return tuple(servers)


def load_environment(skill: Skill) -> CustomEnvironment | None:
    """The skill's custom environment, or None when it ships none."""
    root = skill.path / ENV_DIR
    if not root.is_dir():
        return None
    context: dict[str, bytes] = {}
    mcp: tuple[MCPServerConfig, ...] = ()
    dockerfile: str | None = None
    compose: str | None = None
    h = hashlib.sha256()
    for p in iter_files(root):
        rel = p.relative_to(root.resolve()).as_posix()
        data = p.read_bytes()
        h.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
        if rel.split("/")[0] in RESERVED:
            raise EmitError(
                f"{rel} uses a name the emitter reserves for staged skills and fixtures",
                where=p,
                fix="rename it: " + ", ".join(f"{r}/" for r in RESERVED) + " are written by aces-bench",
            )
        if rel in MCP_FILES:
            mcp = _read_mcp(p)
        elif rel == "Dockerfile":
            try:
                dockerfile = data.decode("utf-8")
            except UnicodeDecodeError:
                raise EmitError("Dockerfile is not UTF-8", where=p, fix="re-save it as UTF-8") from None
        else:
            if rel in COMPOSE_FILES:
                compose = rel
            context[rel] = data
    return CustomEnvironment(source=root, dockerfile=dockerfile, context=context, mcp_servers=mcp,
                             compose_file=compose, content_hash=h.hexdigest())


def dockerfile_text(base_image: str, workdir: str, skills_dir: str, custom: CustomEnvironment | None,
                    plugins_dir: str | None = None) -> str:
    """The emitted Dockerfile: a shared base, then the per-task COPY layers last (whole plugins, when the
    task stages any, at ``plugins_dir``)."""
    if custom is not None and custom.dockerfile is not None:
        head = custom.dockerfile if custom.dockerfile.endswith("\n") else custom.dockerfile + "\n"
    else:
        head = f"FROM {base_image}\n"
    plugins = f"COPY plugins/ {plugins_dir.rstrip('/')}/\n" if plugins_dir else ""
    return (
        f"{head}"
        f"WORKDIR {workdir}\n"
        f"COPY skills/ {skills_dir.rstrip('/')}/\n"
        f"{plugins}"
        f"COPY workspace/ {workdir.rstrip('/')}/\n"
    )
