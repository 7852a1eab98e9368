"""Compose a run spec without the CLI (tests, notebooks, other tools)."""

from __future__ import annotations

from pathlib import Path

from hydra import compose as hydra_compose
from hydra import initialize_config_module
from hydra.errors import HydraException
from omegaconf.errors import OmegaConfBaseException

from aces_bench.config.spec import RunSpec, build_run_spec
from aces_bench.config.store import CONFIG_MODULE, CONFIG_NAME, register
from aces_bench.errors import ConfigError


def compose_config(overrides: list[str] | None = None):
    """The composed DictConfig for ``overrides`` (Hydra semantics, no run)."""
    register()
    try:
        with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
            return hydra_compose(config_name=CONFIG_NAME, overrides=list(overrides or []))
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(hydra_message(exc), where="config", fix=hydra_fix(exc)) from None


def compose_spec(overrides: list[str] | None = None, *, output_dir: Path | str) -> RunSpec:
    """Compose and validate, with ``output_dir`` given (there is no Hydra run dir here)."""
    overrides = list(overrides or [])
    cfg = compose_config([*overrides, f"output_dir={output_dir}"])
    return build_run_spec(cfg, overrides=overrides)


def hydra_message(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    head, rest = lines[0], lines[1:]
    if rest and "Available options" in rest[0]:
        # Hydra lists the valid options one per line: keep them, on one line.
        options = []
        for ln in rest[1:]:
            if ln.startswith("Config search path"):
                break
            if not ln.startswith("base_"):
                options.append(ln)
        return f"{head} {rest[0]} {', '.join(options)}"
    return " ".join(lines[:2])


def hydra_fix(exc: BaseException) -> str:
    text = str(exc)
    if "Could not find" in text or "Available options" in text:
        return "pick one of the listed options (see conf/<group>/ or `aces-bench --help`)"
    if "not in struct" in text.lower() or "Key '" in text:
        return "check the key's spelling against the group's schema (aces_bench/config/schema.py)"
    return "check the override syntax: group=option, group.key=value, +new.key=value"
