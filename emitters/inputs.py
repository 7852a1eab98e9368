"""What a task id is a function of, hashed, so an unchanged re-emit need not render.

A task id is a hash of the rendered task (``harbor_task._digest``); rendering is
deterministic, so the id is a function of its inputs: the task's plan, the run spec,
the bytes under the skill folders the task reads (staged files, ``evals/`` fixtures,
``evals/environment``, native tasks under ``evals/harbor``), and the code that renders
(aces-bench's own sources, templates and verifier checker; Harbor's task models and
the libraries that write task.toml). ``InputKeys.key`` hashes all of them, whole:

- the plan and the spec as their full JSON, so a field added to either is covered
  without a change here;
- every file under each skill folder the task names (the target's and each staged
  skill's), by relative path and content, whatever the file's size or mtime;
- the code, by the content of every source file of the aces_bench packages and of
  Harbor's task models, and the versions of aces-bench, Harbor, pydantic, toml and
  Python.

A tasks folder keeps the key -> id map of its tasks in ``.aces-inputs.json``, written
after Harbor accepted them; an entry is used only when its task's dir is still there.
Nothing here trusts an mtime, so an edit is seen however it was made.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import ClassVar

from pydantic import ValidationError
from pydantic_core import to_json

from aces_bench import __version__
from aces_bench.config.spec import RunSpec
from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord
from aces_bench.emitters.plan import TaskPlan

INPUTS_INDEX = ".aces-inputs.json"


class InputsIndex(VersionedRecord):
    """``.aces-inputs.json``: the id each input key rendered to, under one code fingerprint."""

    SCHEMA_ARTIFACT: ClassVar[str] = "task inputs index"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = "delete it; the next emit renders every task and writes it again"

    code: str
    ids: dict[str, str]


def _hash_file(h, path: str, rel: str) -> None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:  # a dangling link, say: rendering would fail or skip it
        data = f"unreadable: {exc.strerror}".encode()
    h.update(f"{rel}\0{len(data)}\0".encode())
    h.update(data)


def folder_digest(root: Path, *, skip_caches: bool = False) -> str:
    """sha256 over the relative path and bytes of every file under ``root``, links
    followed (a folder reached twice is read once). ``skip_caches`` leaves out
    ``__pycache__`` (Python rewrites it; it is never rendered)."""
    h = hashlib.sha256()
    seen: set[tuple[int, int]] = set()

    def walk(top: str, rel: str) -> None:
        try:
            st = os.stat(top)
            with os.scandir(top) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:  # unlistable: hashed as such; rendering reports it if it reads there
            h.update(f"{rel}\0unlistable: {exc.strerror}\0".encode())
            return
        if (st.st_dev, st.st_ino) in seen:
            return
        seen.add((st.st_dev, st.st_ino))
        for entry in entries:
            if entry.is_dir():
                if not (skip_caches and entry.name == "__pycache__"):
                    walk(entry.path, f"{rel}{entry.name}/")
            else:
                _hash_file(h, entry.path, rel + entry.name)

    walk(str(root), "")
    return h.hexdigest()


def code_roots() -> list[Path]:
    """The folders whose every file is the rendering code: the aces_bench packages
    (templates, the verifier checker, the emitters) and Harbor's task models."""
    import harbor.models.task.config

    import aces_bench

    # the emitters' folder is this module's own (imported by path, emit would import it back)
    return [Path(aces_bench.__file__).parent, Path(__file__).parent, Path(harbor.models.task.config.__file__).parent]


@functools.cache
def code_fingerprint() -> str:
    """The code that renders a task: every file under ``code_roots`` and the versions
    that shape task.toml (computed once per process)."""
    h = hashlib.sha256()
    for name in ("aces-bench", "harbor", "pydantic", "pydantic-core", "toml"):
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = "absent"
        h.update(f"{name}={installed}\0".encode())
    h.update(f"aces_bench={__version__}\0python={sys.version}\0".encode())
    for root in code_roots():
        h.update(folder_digest(root, skip_caches=True).encode())
    return h.hexdigest()


class InputKeys:
    """Input keys for the tasks of one emit (each skill folder is read once)."""

    def __init__(self, spec: RunSpec) -> None:
        self._common = f"{code_fingerprint()}\0{spec.model_dump_json()}\0".encode()
        self._folders: dict[Path, str] = {}

    def _folder(self, path: Path) -> str:
        if path not in self._folders:
            self._folders[path] = folder_digest(path)
        return self._folders[path]

    def key(self, plan: TaskPlan) -> str:
        h = hashlib.sha256(self._common)
        # Through Python values: a frontmatter may hold bytes (YAML's !!binary) that
        # are not UTF-8, which the model's own JSON serializer refuses.
        h.update(to_json(plan.model_dump(), bytes_mode="base64"))
        for path in sorted({plan.target.path, *(s.skill.path for s in plan.staged)}):
            h.update(f"\0{path}\0{self._folder(path)}".encode())
        return h.hexdigest()


def read_inputs_index(tasks_dir: Path) -> dict[str, str]:
    """The folder's key -> id map if it was written by this code, else empty (it is
    only a shortcut: a missing or unreadable one means every task is rendered)."""
    try:
        data = json.loads((tasks_dir / INPUTS_INDEX).read_text(encoding="utf-8"))
        index = InputsIndex.model_validate(data)
    except (OSError, ValueError, ValidationError):
        return {}
    return index.ids if index.code == code_fingerprint() else {}


def write_inputs_index(tasks_dir: Path, ids: dict[str, str]) -> None:
    write_json(tasks_dir / INPUTS_INDEX, InputsIndex(code=code_fingerprint(), ids=ids))
