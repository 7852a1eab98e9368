"""Hydra's structured configs, made from the run spec's pydantic models.

Each setting is declared once, with its default, validation and description, on a model
in ``config/spec.py`` (``judges/spec.py`` for the judge); this module turns those models
into the dataclasses Hydra composes against. Each YAML option under ``conf/<group>/``
extends ``base_<group>`` (registered in ``store.py``), so a misspelled key fails when Hydra
composes, before anything runs; value checks (allowed names, ranges) happen once, when
``spec.build_run_spec`` validates the composed config.

The types OmegaConf can hold stand in for the models' richer ones: a path is a string, a
``Literal`` its values' type, a nested model a nested dataclass. A list field whose model
accepts shortcuts before validation (a plain path for a support skill, a model string for
a panel judge) takes any element, or a scalar that may be null, since Hydra reads a bare
``null`` in a list as None; the model then checks it.
"""

from __future__ import annotations

import dataclasses
import os
import types
from typing import Any, Literal, Optional, Union, get_args, get_origin

from omegaconf import MISSING
from pydantic import BaseModel

from aces_bench.config.spec import (
    ArmSpec,
    BackendSpec,
    DecoySpec,
    GradingSpec,
    HarnessSpec,
    ModelSpec,
    RunSpec,
    SkillSpec,
    StudySpec,
    WorkspaceSpec,
)
from aces_bench.core.gate import GateSettings
from aces_bench.judges.spec import JudgeSpec

# RunSpec's fields that no config sets: written by build_run_spec from Hydra's state.
NOT_SETTINGS = ("schema_version", "overrides", "choices", "budget_dir")

_SCALARS = (str, int, float, bool)


def _accepts_shortcuts(model: type[BaseModel], name: str) -> bool:
    """Whether a "before" validator of ``model`` rewrites field ``name`` (shortcut forms)."""
    return any(name in dec.info.fields and dec.info.mode == "before"
               for dec in model.__pydantic_decorators__.field_validators.values())


def _conf_type(annotation: Any, names: dict[type, str], *, shortcuts: bool = False) -> Any:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = _conf_type(rest[0], names) if len(rest) == 1 else Any
        return Optional[inner] if type(None) in args else inner
    if origin is Literal:
        return type(args[0])
    if origin in (list, tuple):
        element = _conf_type(args[0], names)
        if shortcuts:
            element = Optional[element] if element in _SCALARS else Any
        return list[element]
    if origin is dict:
        return dict[_conf_type(args[0], names), _conf_type(args[1], names)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return structured(annotation, names.get(annotation, annotation.__name__.removesuffix("Spec") + "Conf"), names)
    if annotation is Any or annotation in _SCALARS:
        return annotation
    if isinstance(annotation, type) and issubclass(annotation, os.PathLike):
        return str  # a path is a string in the config
    raise TypeError(f"no Hydra type stands for {annotation!r}: add one to config.schema._conf_type")


_MADE: dict[type, type] = {}


def structured(model: type[BaseModel], name: str, names: dict[type, str] | None = None, *,
               exclude: tuple[str, ...] = ()) -> type:
    """The dataclass Hydra composes for ``model``: one field per setting, its default (MISSING
    where the model requires a value) and an OmegaConf type."""
    if model in _MADE:
        return _MADE[model]
    names = names or {}
    fields = []
    for field_name, info in model.model_fields.items():
        if field_name in exclude:
            continue
        kind = _conf_type(info.annotation, names, shortcuts=_accepts_shortcuts(model, field_name))
        if info.is_required():
            spec = dataclasses.field(default=MISSING)
        elif info.default_factory is not None:
            make = kind if dataclasses.is_dataclass(kind) else info.default_factory
            spec = dataclasses.field(default_factory=lambda make=make: _plain(make()))
        elif isinstance(info.default, list | tuple | dict):
            spec = dataclasses.field(default_factory=lambda default=info.default: _plain(default))
        else:
            spec = dataclasses.field(default=info.default)
        fields.append((field_name, kind, spec))
    made = dataclasses.make_dataclass(name, fields, module=__name__)
    made.__doc__ = f"Hydra's structured config of ``{model.__module__}.{model.__qualname__}``."
    _MADE[model] = made
    return made


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else type(value)(value) if isinstance(value, list | dict) else value


_NAMES = {ArmSpec: "ArmConf", GateSettings: "GateConf"}

GROUP_SCHEMAS = {
    group: structured(model, f"{group.capitalize()}Conf", _NAMES)
    for group, model in (("skill", SkillSpec), ("harness", HarnessSpec), ("model", ModelSpec),
                         ("workspace", WorkspaceSpec), ("decoys", DecoySpec), ("grading", GradingSpec),
                         ("backend", BackendSpec), ("judge", JudgeSpec), ("study", StudySpec))
}
RootConf = structured(RunSpec, "RootConf", _NAMES, exclude=NOT_SETTINGS)
