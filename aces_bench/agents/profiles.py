"""Harness profiles: a harness a study can name (``harness=<name>``) and what aces-bench knows of it.

The built-in harnesses are Hydra options (``conf/harness/*.yaml``). A plugin adds one
with one file: its Harbor agent class and one ``HARNESSES.register(name, HarnessProfile(...))``.
When the config is registered (``config.store.register``) every profile becomes a
``harness`` option beside the YAML ones, so ``aces-bench --help`` lists it and
``harness=<name>`` composes it. ``docs/extending.md`` has the worked example.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aces_bench.core.registry import Registry


@dataclass(frozen=True)
class HarnessProfile:
    """One harness: what the study config needs to run it, and the facts the graders read.

    ``import_path`` (``module:Class``, a Harbor ``BaseAgent``) or ``agent`` (a Harbor agent
    name) says what runs; ``requires_model`` whether it calls a model; ``cli`` an npm CLI
    from ``aces-bench agents install``; ``bundled_skills`` whether the skills the CLI
    ships with stay listed. ``turn_limit`` names the agent kwarg that caps its turns (a
    trigger run sets it), ``skill_roots`` where it finds skills in a trial,
    ``skill_configs`` the files (absolute paths) where it turns skills on or off (a write
    there is a skill change, ``graders/self_correction``), ``api`` the wire API it speaks
    to the model (``anthropic``, ``openai-responses``, ``openai-chat``).
    """

    name: str
    import_path: str | None = None
    agent: str | None = None
    requires_model: bool = True
    label: str = ""
    cli: str | None = None
    bundled_skills: str = "off"
    kwargs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    turn_limit: str | None = None
    skill_roots: tuple[str, ...] = ()
    skill_configs: tuple[str, ...] = ()
    tool_kinds: dict[str, str] = field(default_factory=dict)
    api: str | None = None

    def config(self) -> dict[str, Any]:
        """The ``harness`` config group's fields (``config.schema.HarnessConf``)."""
        return {"name": self.name, "import_path": self.import_path, "agent": self.agent,
                "requires_model": self.requires_model, "label": self.label or self.name, "cli": self.cli,
                "bundled_skills": self.bundled_skills, "kwargs": dict(self.kwargs), "env": dict(self.env)}


HARNESSES: Registry[HarnessProfile] = Registry("harness", where="harness")


_derived: dict[str, tuple[int, object]] = {}


def _cached(key: str, build):
    seen = _derived.get(key)
    if seen is None or seen[0] != HARNESSES.version:
        HARNESSES.names()  # plugins first
        seen = _derived[key] = (HARNESSES.version, build())
    return seen[1]


def profile_tool_kinds() -> dict[str, str]:
    """Every registered profile's tool names -> kinds (lower-cased), for the graders."""
    return _cached("tools", lambda: {name.lower(): kind for _, p in HARNESSES.items() for name, kind in p.tool_kinds.items()})


def profile_skill_roots() -> tuple[str, ...]:
    """Every registered profile's skill folders inside a trial."""
    return _cached("roots", lambda: tuple(root for _, p in HARNESSES.items() for root in p.skill_roots))


def profile_skill_configs() -> tuple[str, ...]:
    """Every registered profile's skill config files (where it turns skills on or off)."""
    return _cached("configs", lambda: tuple(path for _, p in HARNESSES.items() for path in p.skill_configs))


def profile_turn_limit(name: str) -> str | None:
    """The turn-limit kwarg of the registered harness ``name``, if it has one."""
    return HARNESSES.get(name).turn_limit if name in HARNESSES else None
