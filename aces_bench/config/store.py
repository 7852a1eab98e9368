"""Register the schemas with Hydra's ConfigStore and the ``${aces_examples:...}`` and
``${aces_member:...}`` resolvers."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
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


# A member folder name keeps these characters; any other (a '/' in model.name=openai/x,
# spaces, quotes, ':' of a URL) becomes '_' and the name gets a hash of the overrides,
# so two members never share a folder and no member nests inside another.
_UNSAFE = re.compile(r"[^A-Za-z0-9._,=+@%\[\]-]")
MAX_MEMBER_NAME = 160


def member_dirname(overrides: Sequence[str], exclude_keys: Sequence[str] = (), requires_model: bool = True) -> str:
    """The folder name of one sweep member: its overrides as ``key=value`` joined by ``,``
    (sorted, excluded keys left out), safe as one path component.

    For a harness that uses no model (``requires_model`` false), the ``model`` keys are
    left out too: every model of a sweep gives that harness the same member, which a
    re-run resumes instead of repeating.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    items = []
    for text in overrides:
        override = parser.parse_override(str(text))
        key = override.get_key_element()
        bare = override.key_or_group
        if bare in exclude_keys or (not requires_model and (bare == "model" or bare.startswith("model."))):
            continue
        items.append((key, override.get_value_element_as_str().replace("\\", "")))
    raw = ",".join(f"{k}={v}" for k, v in sorted(items))
    if not raw:
        return "default"
    safe = _UNSAFE.sub("_", raw)
    if safe == raw and len(raw) <= MAX_MEMBER_NAME:
        return raw
    return f"{safe[:MAX_MEMBER_NAME]}~{hashlib.sha256(raw.encode()).hexdigest()[:8]}"


def _member_resolver(overrides, exclude_keys, requires_model) -> str:
    return member_dirname(list(overrides or []), list(exclude_keys or []), bool(requires_model))


def _name_resolver(name, key="study.name") -> str:
    """``name`` when it is one safe path component; the run dir is made from it before the
    spec is validated, so ``study.name=../../x`` would write outside the outputs folder."""
    import re

    from aces_bench.core.errors import ConfigError

    text = str(name)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", text):
        raise ConfigError(f"{text!r} is not a folder name (letters, digits, '_', '-', '.'; not starting "
                          "with '.'): it names the study's output folder, which must stay inside outputs/",
                          where=key, fix=f"e.g. {key}=my-study")
    return text


def _store_plugin_options(cs: ConfigStore) -> None:
    """Every registered harness and backend profile (a plugin's) becomes an option of its
    group, beside the YAML files: ``harness=<name>`` composes it and ``--help`` lists it.
    A built-in harness profile has its YAML option already, and a grading-only one
    (``runnable=False``) is no option."""
    from aces_bench.agents.profiles import HARNESSES, is_builtin
    from aces_bench.backends import BACKENDS
    from aces_bench.core.errors import ConfigError

    for group, registry in (("harness", HARNESSES), ("backend", BACKENDS)):
        shipped = {p.name.removesuffix(".yaml") for p in resources.files(CONFIG_MODULE).joinpath(group).iterdir()}
        for name, profile in registry.items():
            if group == "harness" and (not profile.runnable or (is_builtin(name) and name in shipped)):
                continue
            if name in shipped or name == f"base_{group}":
                raise ConfigError(f"a plugin registers {group} {name!r}, which aces-bench ships already",
                                  where=f"{group}={name}", fix="register it under another name")
            cs.store(group=group, name=name, node=GROUP_SCHEMAS[group](**profile.config()))


def group_options() -> dict[str, list[str]]:
    """Each config group a user picks from (``group=option``), with its options: the YAML
    files under ``conf/<group>/`` and the plugin profiles stored by ``register``; the
    schemas (``base_<group>``) are no option. The launchers shipped in ``conf/hydra/launcher/``
    close the list (Hydra's plugins add their own, which ``--hydra-help`` lists)."""
    register()
    stored = ConfigStore.instance().repo
    conf = resources.files(CONFIG_MODULE)
    groups = {}
    for group in (*sorted(GROUP_SCHEMAS), "hydra/launcher"):
        folder = conf.joinpath(group)
        names = {p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml")}
        if group in stored:
            names |= {k.removesuffix(".yaml") for k in stored[group] if k.endswith(".yaml")}
        groups[group] = sorted(n for n in names if not n.startswith("base_"))
    return groups


def register() -> None:
    """Idempotent: safe to call from the CLI, tests and the compose API."""
    global _registered
    if _registered:
        return
    cs = ConfigStore.instance()
    cs.store(name="base_config", node=RootConf)
    for group, schema in GROUP_SCHEMAS.items():
        cs.store(group=group, name=f"base_{group}", node=schema)
    _store_plugin_options(cs)
    if not OmegaConf.has_resolver("aces_examples"):
        OmegaConf.register_new_resolver("aces_examples", examples_path)
    if not OmegaConf.has_resolver("aces_name"):
        OmegaConf.register_new_resolver("aces_name", _name_resolver)
    if not OmegaConf.has_resolver("aces_member"):
        OmegaConf.register_new_resolver("aces_member", _member_resolver)
    _registered = True
