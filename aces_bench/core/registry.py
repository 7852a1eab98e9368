"""One kind of registry for every extension point, and the plugin entry-point group.

A ``Registry`` maps a name to what it names: an object, or an import path
``"package.module:attr"`` loaded on first use, so listing the names (a config check, a
``--help``) imports nothing. An unknown name is a ``ConfigError`` that says where the
name came from (``where``, e.g. ``judge.kind``) and lists every valid one.

Third parties add entries without editing aces-bench: a package declares an entry point
in the ``aces_bench.plugins`` group whose value is a module (or a callable); aces-bench
imports each one once, the first time any registry is read, and the module registers
what it brings (``JUDGES.register(...)``, ``HARNESSES.register(...)``, ...). A plugin that
fails to import is an error naming it and its distribution, never skipped silently.
``docs/extending.md`` walks through one of each kind.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from collections.abc import Callable, Iterator
from importlib import metadata

from aces_bench.core.errors import ConfigError

PLUGIN_GROUP = "aces_bench.plugins"

_plugins_loaded = False
_plugins_lock = threading.RLock()
_changed_outside = False


def _note_caller(depth: int) -> None:
    """Remember that code outside aces-bench (a plugin, a test, a notebook) changed a registry."""
    global _changed_outside
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_globals.get("__name__") == __name__:  # through ``decorator``
        frame = frame.f_back
    caller = frame.f_globals.get("__name__", "") if frame is not None else ""
    if not (caller == "aces_bench" or caller.startswith("aces_bench.")):
        _changed_outside = True


def changed_outside() -> bool:
    """Did code outside aces-bench add, replace or remove a registry entry in this process
    (plugins loaded first)? Then what aces-bench computes is not a function of its own code
    alone, and the report's caches (``reports/memo.py``) stay off."""
    load_plugins()
    return _changed_outside


def load_plugins(*, reload: bool = False) -> list[str]:
    """Import every ``aces_bench.plugins`` entry point once; returns their names.

    ``reload=True`` imports them again (a test that installs a plugin mid-session)."""
    global _plugins_loaded
    with _plugins_lock:
        if _plugins_loaded and not reload:
            return []
        _plugins_loaded = True
        names = []
        for ep in sorted(metadata.entry_points(group=PLUGIN_GROUP), key=lambda e: e.name):
            dist = getattr(ep.dist, "name", None) or "an installed package"
            try:
                loaded = ep.load()
            except Exception as exc:  # a broken plugin is named, never skipped
                raise ConfigError(
                    f"plugin {ep.name!r} ({ep.value}, from {dist}) failed to load: {type(exc).__name__}: {exc}",
                    where=f"entry point group {PLUGIN_GROUP}",
                    fix=f"fix or uninstall {dist}",
                ) from None
            if callable(loaded) and not isinstance(loaded, types.ModuleType):
                loaded()
            names.append(ep.name)
        return names


def load_path(path: str) -> object:
    """``"package.module:attr"`` -> the attribute (``"package.module"`` -> the module)."""
    module, _, attr = path.partition(":")
    loaded = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        loaded = getattr(loaded, part)
    return loaded


class Registry[T]:
    """Names -> entries of one kind (judges, harness profiles, backends, figures, file readers).

    ``kind`` is what an entry is called in messages ("judge kind"); ``where`` is the
    config key a user types the name under (``judge.kind``).
    """

    def __init__(self, kind: str, *, where: str, plugins: bool = True, ordered: bool = False):
        self.kind = kind
        self.where = where
        self._plugins = plugins
        self._ordered = ordered  # names in registration order (report figures), else sorted
        self._entries: dict[str, T | str] = {}
        self.version = 0  # bumped by every change: a reader may cache what it derives from the entries

    def register(self, name: str, entry: T | str, *, replace: bool = False) -> None:
        """Add ``name``; ``entry`` is the object or its import path (``module:attr``).

        A name registered twice is an error unless ``replace`` (a plugin overriding a
        built-in says so)."""
        if not name or not isinstance(name, str):
            raise ValueError(f"{self.kind}: a name must be a non-empty string, not {name!r}")
        if name in self._entries and not replace:
            raise ValueError(f"{self.kind} {name!r} is registered already (pass replace=True to override it)")
        _note_caller(1)
        self._entries[name] = entry
        self.version += 1

    def unregister(self, name: str) -> None:
        _note_caller(1)
        self._entries.pop(name, None)
        self.version += 1

    def _ready(self) -> None:
        if self._plugins:
            load_plugins()

    def names(self) -> list[str]:
        """Every registered name, sorted or in registration order (plugins included)."""
        self._ready()
        return list(self._entries) if self._ordered else sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ready()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def unknown(self, name: object) -> ConfigError:
        return ConfigError(f"unknown {self.kind} {name!r}", where=self.where, fix=f"use one of: {', '.join(self.names())}")

    def get(self, name: str) -> T:
        """The entry for ``name`` (imported on first use); an unknown name is a ConfigError listing the valid ones."""
        self._ready()
        try:
            entry = self._entries[name]
        except (KeyError, TypeError):
            raise self.unknown(name) from None
        if isinstance(entry, str):
            entry = load_path(entry)  # type: ignore[assignment]
            self._entries[name] = entry
        return entry  # type: ignore[return-value]

    __getitem__ = get

    def items(self) -> list[tuple[str, T]]:
        """Every (name, entry), each imported."""
        return [(name, self.get(name)) for name in self.names()]

    def decorator(self, name: str) -> Callable[[T], T]:
        """``@REGISTRY.decorator("name")`` registers what it decorates."""

        def wrap(entry: T) -> T:
            self.register(name, entry)
            return entry

        return wrap
