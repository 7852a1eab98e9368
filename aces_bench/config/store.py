"""Register the schemas with Hydra's ConfigStore and the ``${aces_examples:...}`` resolver."""

from __future__ import annotations

from importlib import resources

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from aces_bench.config.schema import GROUP_SCHEMAS, RootConf

CONFIG_MODULE = "aces_bench.conf"
CONFIG_PATH = f"pkg://{CONFIG_MODULE}"
CONFIG_NAME = "config"

_registered = False


def examples_path(sub: str = "") -> str:
    """Absolute path of the example skills shipped as package data."""
    root = resources.files("aces_bench.examples")
    return str(root.joinpath(sub)) if sub else str(root)


def register() -> None:
    """Idempotent: safe to call from the CLI, tests and the compose API."""
    global _registered
    if _registered:
        return
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=RootConf)
    for group, schema in GROUP_SCHEMAS.items():
        cs.store(group=group, name=f"base_{group}", node=schema)
    if not OmegaConf.has_resolver("aces_examples"):
        OmegaConf.register_new_resolver("aces_examples", examples_path)
    _registered = True
