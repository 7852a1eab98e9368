"""Execution backends. The local bubblewrap sandbox is ``backends/local.py``.

Only names live here: the config layer reads ``LOCAL_BACKEND`` and ``BACKENDS``
without loading the sandbox (bwrap, Harbor's environment classes);
``backends.local.IMPORT_PATH`` is ``LOCAL_BACKEND``.

The built-in backends are Hydra options (``conf/backend/*.yaml``). A plugin adds one with
one file: its Harbor environment class and one ``BACKENDS.register(name, BackendProfile(...))``;
it then is a ``backend`` option (``aces-bench --help`` lists it), and its ``preflight``
(an import path to ``f(spec)``, raising an aces_bench error) runs with the study's
preflight, before any trial runs.

May import (pyproject's layers contract): ``cases`` and every layer below it; not its
siblings ``agents`` and ``judges``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aces_bench.core.registry import Registry

LOCAL_BACKEND = "aces_bench.backends.local:LocalSandboxEnvironment"


@dataclass(frozen=True)
class BackendProfile:
    """One backend: its Harbor environment (``import_path`` ``module:Class``, or a Harbor
    ``type``), whether it runs trials on this machine (``is_local``: the local-sandbox
    rules apply), and its own preflight check."""

    name: str
    import_path: str | None = None
    type: str | None = None
    label: str = ""
    is_local: bool = False
    preflight: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        """The ``backend`` config group's fields (``config.schema.BackendConf``)."""
        return {"name": self.name, "import_path": self.import_path, "type": self.type,
                "label": self.label or self.name, "kwargs": dict(self.kwargs)}


BACKENDS: Registry[BackendProfile] = Registry("backend", where="backend")
