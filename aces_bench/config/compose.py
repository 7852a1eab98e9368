"""Compose a run spec without the CLI (tests, notebooks, other tools)."""

from __future__ import annotations

from pathlib import Path

from hydra import compose as hydra_compose
from hydra import initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import (
    ConfigCompositionException,
    HydraException,
    MissingConfigException,
    OverrideParseException,
)
from omegaconf.errors import OmegaConfBaseException

from aces_bench.config.spec import RunSpec, build_run_spec
from aces_bench.config.store import CONFIG_MODULE, CONFIG_NAME, register
from aces_bench.core.errors import ConfigError


def compose_config(overrides: list[str] | None = None):
    """The composed DictConfig for ``overrides`` (Hydra semantics, no run)."""
    from aces_bench.config.overrides import normalize

    register()
    overrides = normalize(overrides or [])
    try:
        if GlobalHydra.instance().is_initialized():
            # Inside the Hydra app (a designed study composes its members): same config module.
            return hydra_compose(config_name=CONFIG_NAME, overrides=list(overrides or []))
        with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
            return hydra_compose(config_name=CONFIG_NAME, overrides=list(overrides or []))
    except (HydraException, OmegaConfBaseException) as exc:
        error = compose_error(exc) or ConfigError(
            str(exc).splitlines()[0], where="config", fix="see conf/README.md for the groups and keys"
        )
        raise error from None


def compose_spec(overrides: list[str] | None = None, *, output_dir: Path | str) -> RunSpec:
    """Compose and validate, with ``output_dir`` given (there is no Hydra run dir here)."""
    overrides = list(overrides or [])
    # Quoted: a designed study's member folders hold '=' and ',' (decoys=paper,harness=...).
    quoted = str(output_dir).replace("\\", "\\\\").replace("'", "\\'")
    cfg = compose_config([*overrides, f"output_dir='{quoted}'"])
    return build_run_spec(cfg, overrides=overrides)


_GRAMMAR = "https://hydra.cc/docs/advanced/override_grammar/basic/"

# Hydra launcher plugins behind conf/hydra/launcher/*.yaml: (pip install target, launcher option).
_LAUNCHER_PLUGINS = {
    "ray": ("'aces-bench[ray]'", "ray_cluster"),
    "joblib": ("hydra-joblib-launcher", "local_parallel"),
    "submitit_slurm": ("hydra-submitit-launcher", "slurm"),
    "submitit_local": ("hydra-submitit-launcher", "slurm_local"),
}


def _launcher_missing(message: str, missing: str) -> ConfigError | None:
    """A launcher option whose Hydra plugin is not installed ('Could not load hydra/launcher/ray')."""
    import re

    loaded = re.search(r"Could not load '(hydra/launcher/[^']+)'", message)
    target = loaded.group(1) if loaded else missing
    if not target.startswith("hydra/launcher/"):
        return None
    plugin = target.rpartition("/")[2]
    if plugin not in _LAUNCHER_PLUGINS:
        return None
    install, option = _LAUNCHER_PLUGINS[plugin]
    return ConfigError(f"launcher {option} needs the Hydra launcher plugin '{plugin}', which is not installed",
                       where="hydra/launcher", fix=f"pip install {install}")


def compose_error(exc: Exception) -> ConfigError | None:
    """A Hydra compose-time failure (bad override, unknown key or option) as one user error.

    Returns None for anything else, which is then a bug and keeps its traceback.
    """
    cause = exc.__cause__
    if isinstance(exc, MissingConfigException):
        missing = str(exc.missing_cfg_file or "")
        group, _, option = missing.rpartition("/")
        launcher = _launcher_missing(str(exc), missing)
        if launcher is not None:
            return launcher
        options = [o for o in (exc.options or []) if not o.startswith("base_")]
        if group and options:
            return ConfigError(f"no option {option!r} in config group {group!r} (no config {missing})",
                               where=f"{group}={option}",
                               fix=f"choose one of: {', '.join(options)} (conf/README.md lists them)")
        return ConfigError(str(exc).splitlines()[0], where="config", fix="see conf/README.md for the groups")
    if isinstance(exc, OverrideParseException):
        return ConfigError(f"cannot parse the override: {exc.message.splitlines()[0]}", where=exc.override,
                           fix=f"write group=option or key=value; quote lists for the shell, e.g. "
                               f"'skill.paths=[/a,/b]' (grammar: {_GRAMMAR})")
    if isinstance(exc, ConfigCompositionException) and isinstance(cause, OmegaConfBaseException):
        key = cause.full_key or "config"
        reason = (cause.msg or str(cause)).splitlines()[0]
        if "not in" in reason:  # unknown key (ConfigKeyError / ConfigAttributeError)
            parent = cause.parent_node
            known = [str(k) for k in parent.keys() if k != "hydra"] if parent is not None else []
            fix = (f"valid keys here: {', '.join(known)}; see conf/README.md" if known
                   else f"add a new entry with +{key}=<value>")
            return ConfigError(f"unknown key: {reason}", where=key, fix=fix)
        if "is not a ListConfig" in reason:
            return ConfigError("expects a list", where=key, fix=f"write a list, quoted for the shell: '{key}=[a,b]'")
        return ConfigError(reason, where=key, fix="give a value of the key's type; conf/README.md lists every key")
    if isinstance(exc, ConfigCompositionException):
        return ConfigError(str(exc).splitlines()[0], where="config", fix="see conf/README.md for the groups and keys")
    return None
