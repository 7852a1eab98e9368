"""The Dockerfile subset the local backend honours, parsed into a build plan.

The local backend does not build images: it replays a task's Dockerfile onto a
private directory tree that becomes the sandbox's writable root. That only works for
a small subset, the one the emitter writes:

``FROM`` (recorded, never pulled), ``ARG`` with defaults, ``ENV``, ``LABEL``,
``WORKDIR``, ``COPY`` (with ``--chmod``/``--chown``), ``ADD`` of local files and
archives, and ``RUN`` (executed in the sandbox without network).

Everything else is refused with a :class:`~aces_bench.core.errors.BackendError` naming the
Dockerfile, the line and the instruction, so a task never runs in a setting its
author did not write. Line numbers come from ``dockerfile-parse``; the values of
each instruction are parsed here because the library does not expose them per line.
"""

from __future__ import annotations

import glob
import io
import json
import os
import re
import shlex
import tarfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dockerfile_parse import DockerfileParser

from aces_bench.core.errors import BackendError

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

FIX_USE_DOCKER = "remove or rewrite that instruction, or run this task with backend=docker"

SUPPORTED = "FROM, ARG, ENV, LABEL, WORKDIR, COPY, ADD of local files, RUN"

# Why each refused instruction cannot be honoured; shown to the user verbatim.
_REFUSED: dict[str, str] = {
    "USER": "the local sandbox runs every command as root",
    "VOLUME": "the local sandbox has no volumes",
    "EXPOSE": "the local sandbox publishes no ports",
    "ENTRYPOINT": "the local sandbox starts no container process; Harbor runs commands through exec",
    "CMD": "the local sandbox starts no container process; Harbor runs commands through exec",
    "HEALTHCHECK": "put the check in task.toml as [environment].healthcheck instead",
    "SHELL": "RUN always uses /bin/sh -c in the local sandbox",
    "ONBUILD": "the local sandbox builds no images",
    "STOPSIGNAL": "the local sandbox starts no container process",
    "MAINTAINER": "deprecated by Docker; use LABEL",
}

_HEREDOC = re.compile(r"(?<!<)<<-?[\"']?[A-Za-z_][A-Za-z0-9_]*")
_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://|git@)")
_VAR = re.compile(r"\\\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class WorkdirStep:
    """Create ``path`` (absolute) in the sandbox root."""

    line: int
    path: str


@dataclass(frozen=True)
class CopyStep:
    """Copy ``sources`` (paths relative to the build context) to ``dest``.

    ``dest`` is absolute; ``into_dir`` says whether sources land inside it (Docker's
    trailing-slash and many-sources rule). ``extract_archives`` marks ``ADD``, which
    unpacks local tar archives instead of copying them.
    """

    line: int
    instruction: str
    sources: tuple[str, ...]
    dest: str
    into_dir: bool
    chmod: int | None = None
    chown: str | None = None
    extract_archives: bool = False


@dataclass(frozen=True)
class RunStep:
    """Run ``command`` with ``/bin/sh -c`` in ``workdir``, ARG and ENV values as env."""

    line: int
    command: str
    workdir: str
    env: dict[str, str] = field(default_factory=dict)


Step = WorkdirStep | CopyStep | RunStep


@dataclass(frozen=True)
class DockerfilePlan:
    """What the local backend will do with one Dockerfile.

    ``env`` is the image environment after the last ``ENV`` (PATH included);
    ``workdir`` the last ``WORKDIR`` (``/`` when none). ``base_image`` is recorded
    for the report only: the sandbox runs the host's userland, not this image.
    """

    path: Path
    base_image: str
    workdir: str
    env: dict[str, str]
    labels: dict[str, str]
    steps: tuple[Step, ...]

    @property
    def context(self) -> Path:
        return self.path.parent


def load_plan(environment_dir: Path, docker_image: str | None = None) -> DockerfilePlan:
    """Parse ``environment_dir/Dockerfile`` into a plan, or raise a BackendError.

    Raises when the task sets ``[environment].docker_image`` without a Dockerfile
    (the local backend cannot pull images), when the environment is a Compose
    project, when there is no Dockerfile at all, or when the Dockerfile leaves the
    supported subset. Callers can run this on every emitted task before any trial.
    """
    environment_dir = Path(environment_dir)
    dockerfile = environment_dir / "Dockerfile"
    for compose in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml"):
        if (environment_dir / compose).exists():
            raise BackendError(
                "Docker Compose environments are not supported by backend=local "
                "(it runs one sandbox per trial)",
                where=environment_dir / compose,
                fix="run this task with backend=docker",
            )
    if not dockerfile.is_file():
        if docker_image:
            raise BackendError(
                f"[environment].docker_image = {docker_image!r} is set but there is no "
                "environment/Dockerfile; backend=local cannot pull images",
                where=environment_dir.parent / "task.toml",
                fix=f"add environment/Dockerfile starting with 'FROM {docker_image}', "
                "or run this task with backend=docker",
            )
        raise BackendError(
            "no Dockerfile: backend=local replays environment/Dockerfile to build the sandbox",
            where=dockerfile,
            fix="add a Dockerfile (FROM, WORKDIR, COPY ...) or run this task with backend=docker",
        )
    return parse_dockerfile(dockerfile)


def parse_dockerfile(path: Path) -> DockerfilePlan:
    """Parse one Dockerfile of the supported subset; refuse anything else by line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BackendError(f"cannot read the Dockerfile: {exc}", where=path) from exc
    # fileobj keeps dockerfile-parse from writing next to the task's Dockerfile.
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")))
    return _Builder(path).build(parser.structure)


class _Builder:
    """Walks dockerfile-parse's instruction list, keeping Docker's scoping rules."""

    def __init__(self, path: Path):
        self.path = path
        self.global_args: dict[str, str] = {}
        self.args: dict[str, str] = {}
        self.env: dict[str, str] = {"PATH": DEFAULT_PATH}
        self.labels: dict[str, str] = {}
        self.workdir = "/"
        self.base_image: str | None = None
        self.steps: list[Step] = []

    def refuse(self, line: int, instruction: str, reason: str) -> BackendError:
        return BackendError(
            f"{instruction} is not supported by backend=local: {reason}",
            where=f"{self.path}:{line}",
            fix=FIX_USE_DOCKER,
        )

    def invalid(self, line: int, instruction: str, reason: str) -> BackendError:
        return BackendError(
            f"invalid {instruction}: {reason}",
            where=f"{self.path}:{line}",
            fix="fix the instruction (see https://docs.docker.com/reference/dockerfile/)",
        )

    def build(self, structure: list[dict]) -> DockerfilePlan:
        for item in structure:
            instruction = item["instruction"].upper()
            line = item["startline"] + 1
            value = item["value"].strip()
            if instruction == "COMMENT":
                continue
            handler = getattr(self, f"_on_{instruction.lower()}", None)
            if handler is None:
                reason = _REFUSED.get(instruction, f"it is outside the supported subset ({SUPPORTED})")
                raise self.refuse(line, instruction, reason)
            if self.base_image is None and instruction not in ("FROM", "ARG"):
                raise self.refuse(line, instruction, "only ARG may come before FROM")
            handler(line, value)
        if self.base_image is None:
            raise BackendError(
                "the Dockerfile has no FROM instruction",
                where=self.path,
                fix="start the Dockerfile with 'FROM <image>'",
            )
        return DockerfilePlan(
            path=self.path,
            base_image=self.base_image,
            workdir=self.workdir,
            env=dict(self.env),
            labels=dict(self.labels),
            steps=tuple(self.steps),
        )

    # -- variables ---------------------------------------------------------------
    def scope(self) -> dict[str, str]:
        """Variables visible to substitution: ENV wins over ARG, as in Docker."""
        if self.base_image is None:
            return dict(self.global_args)
        return {**self.args, **self.env}

    def expand(self, text: str) -> str:
        scope = self.scope()

        def sub(m: re.Match[str]) -> str:
            if m.group(0) == "\\$":
                return "$"
            name = m.group(1) or m.group(4)
            value = scope.get(name)
            if m.group(2) == ":-":
                return value if value else m.group(3)
            if m.group(2) == ":+":
                return m.group(3) if value else ""
            return value or ""

        return _VAR.sub(sub, text)

    def pairs(self, line: int, instruction: str, value: str) -> list[tuple[str, str]]:
        """``K=V K2="v 2"`` or the legacy ``K the value`` form."""
        try:
            tokens = shlex.split(value, posix=True)
        except ValueError as exc:
            raise self.invalid(line, instruction, f"cannot parse its value ({exc})") from exc
        if not tokens:
            raise self.invalid(line, instruction, "it has no value")
        if "=" not in tokens[0]:
            key, *rest = re.split(r"\s+", value.strip(), maxsplit=1)
            return [(key, self.expand(rest[0] if rest else ""))]
        out = []
        for token in tokens:
            if "=" not in token:
                raise self.invalid(line, instruction, f"expected KEY=VALUE, got {token!r}")
            key, _, val = token.partition("=")
            out.append((key, self.expand(val)))
        return out

    # -- instructions ------------------------------------------------------------
    def _on_arg(self, line: int, value: str) -> None:
        for token in value.split():
            name, has_default, default = token.partition("=")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise self.invalid(line, "ARG", f"invalid name {name!r}")
            if self.base_image is None:
                self.global_args[name] = self.expand(default) if has_default else ""
            elif has_default:
                self.args[name] = self.expand(default)
            else:
                # A bare ARG re-declares a global ARG inside the stage (Docker rule).
                self.args[name] = self.global_args.get(name, "")

    def _on_from(self, line: int, value: str) -> None:
        if self.base_image is not None:
            raise self.refuse(line, "FROM", "multi-stage builds are not supported (second FROM)")
        tokens = [t for t in value.split() if not t.startswith("--platform")]
        if not tokens or (len(tokens) not in (1, 3)) or (len(tokens) == 3 and tokens[1].upper() != "AS"):
            raise self.invalid(line, "FROM", f"expected 'FROM <image> [AS <name>]', got {value!r}")
        self.base_image = self.expand(tokens[0])

    def _on_env(self, line: int, value: str) -> None:
        for key, val in self.pairs(line, "ENV", value):
            self.env[key] = val

    def _on_label(self, line: int, value: str) -> None:
        for key, val in self.pairs(line, "LABEL", value):
            self.labels[key] = val

    def _on_workdir(self, line: int, value: str) -> None:
        target = self.expand(value)
        self.workdir = _absolute(target, self.workdir)
        self.steps.append(WorkdirStep(line=line, path=self.workdir))

    def _on_run(self, line: int, value: str) -> None:
        if _HEREDOC.search(value):
            raise self.refuse(line, "RUN", "heredoc syntax (<<EOF) is not supported")
        if value.startswith("--"):
            flag = value.split()[0].partition("=")[0]
            raise self.refuse(line, "RUN", f"the flag {flag} is not supported")
        command = value
        if value.startswith("["):
            command = shlex.join(self.exec_form(line, "RUN", value))
        env = {**self.args, **self.env}
        self.steps.append(RunStep(line=line, command=command, workdir=self.workdir, env=env))

    def _on_copy(self, line: int, value: str) -> None:
        self.copy(line, "COPY", value)

    def _on_add(self, line: int, value: str) -> None:
        self.copy(line, "ADD", value)

    def exec_form(self, line: int, instruction: str, value: str) -> list[str]:
        try:
            parts = json.loads(value)
        except json.JSONDecodeError as exc:
            raise self.invalid(line, instruction, f"invalid JSON form ({exc.msg})") from exc
        if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
            raise self.invalid(line, instruction, "the JSON form must be a list of strings")
        return parts

    def copy(self, line: int, instruction: str, value: str) -> None:
        if _HEREDOC.search(value):
            raise self.refuse(line, instruction, "heredoc syntax (<<EOF) is not supported")
        tokens = value.split()
        chmod: int | None = None
        chown: str | None = None
        while tokens and tokens[0].startswith("--"):
            flag, _, arg = tokens.pop(0).partition("=")
            if flag == "--from":
                raise self.refuse(line, instruction, f"{flag} (multi-stage builds) is not supported")
            if flag == "--chmod":
                try:
                    chmod = int(arg, 8)
                except ValueError as exc:
                    raise self.invalid(line, instruction, f"--chmod needs an octal mode, got {arg!r}") from exc
            elif flag == "--chown":
                chown = self.expand(arg)
            elif flag != "--link":
                raise self.refuse(line, instruction, f"the flag {flag} is not supported")
        rest = " ".join(tokens)
        words = self.exec_form(line, instruction, rest) if rest.startswith("[") else tokens
        words = [self.expand(w) for w in words]
        if len(words) < 2:
            raise self.invalid(line, instruction, f"expected '{instruction} <src>... <dest>', got {value!r}")
        *sources, dest = words
        for src in sources:
            if _URL.match(src):
                reason = f"{src!r} is a remote source; the local sandbox builds without network"
                raise self.refuse(line, instruction, reason)
        resolved = [s for src in sources for s in self.context_paths(line, instruction, src)]
        into_dir = dest.endswith("/") or len(sources) > 1 or any(_has_glob(s) for s in sources)
        self.steps.append(
            CopyStep(
                line=line,
                instruction=instruction,
                sources=tuple(resolved),
                dest=_absolute(dest, self.workdir),
                into_dir=into_dir,
                chmod=chmod,
                chown=chown,
                extract_archives=instruction == "ADD",
            )
        )

    def context_paths(self, line: int, instruction: str, src: str) -> list[str]:
        """Sources relative to the build context; refuse escapes and missing files."""
        context = self.path.parent.resolve()
        pattern = os.path.normpath(src.lstrip("/")) if src not in (".", "./") else "."
        if pattern == ".." or pattern.startswith("../"):
            raise self.refuse(line, instruction, f"source {src!r} is outside the build context {context}")
        matches = sorted(glob.glob(pattern, root_dir=context)) if _has_glob(pattern) else [pattern]
        out = []
        for rel in matches:
            full = (context / rel).resolve()
            if not full.is_relative_to(context):
                raise self.refuse(line, instruction, f"source {src!r} resolves outside the build context {context}")
            if not (context / rel).exists():
                raise BackendError(
                    f"{instruction} source {src!r} does not exist in the build context {context}",
                    where=f"{self.path}:{line}",
                    fix="stage the file next to the Dockerfile or fix the path",
                )
            out.append(rel)
        if not out:
            raise BackendError(
                f"{instruction} source {src!r} matches no file in the build context {context}",
                where=f"{self.path}:{line}",
                fix="stage the file next to the Dockerfile or fix the pattern",
            )
        return out


def _absolute(path: str, workdir: str) -> str:
    """``path`` made absolute against ``workdir`` and normalised (no trailing slash)."""
    joined = os.path.normpath(str(PurePosixPath(workdir) / path))
    return "/" + joined.lstrip("/")


def _has_glob(path: str) -> bool:
    return any(ch in path for ch in "*?[")


def is_archive(path: Path) -> bool:
    """Whether ``ADD`` would unpack this local file (a tar archive, maybe compressed)."""
    return path.is_file() and tarfile.is_tarfile(path)
