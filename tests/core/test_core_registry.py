"""The one registry type: lazy import paths, errors that list the valid names, plugins that fail loudly."""

from __future__ import annotations

import pytest

from aces_bench.core import registry
from aces_bench.core.errors import ConfigError
from aces_bench.core.registry import Registry, load_path


def test_an_entry_named_by_path_is_imported_on_first_use_only():
    reg: Registry = Registry("widget", where="study.widget", plugins=False)
    reg.register("dumps", "json:dumps")
    assert "dumps" in reg and reg.names() == ["dumps"]
    assert reg.get("dumps")({"a": 1}) == '{"a": 1}'


def test_an_unknown_name_is_a_config_error_listing_the_valid_ones():
    reg: Registry = Registry("widget", where="study.widget", plugins=False)
    reg.register("b", object())
    reg.register("a", object())
    with pytest.raises(ConfigError) as err:
        reg.get("c")
    assert "unknown widget 'c'" in str(err.value) and "use one of: a, b" in str(err.value)
    assert "study.widget" in str(err.value)


def test_a_name_registered_twice_is_refused_unless_replaced():
    reg: Registry = Registry("widget", where="w", plugins=False)
    reg.register("a", 1)
    with pytest.raises(ValueError, match="registered already"):
        reg.register("a", 2)
    reg.register("a", 2, replace=True)
    assert reg.get("a") == 2


def test_ordered_registries_keep_registration_order():
    reg: Registry = Registry("figure", where="w", plugins=False, ordered=True)
    for name in ("zeta", "alpha", "mid"):
        reg.register(name, name)
    assert reg.names() == ["zeta", "alpha", "mid"]


def test_a_plugin_that_fails_to_import_is_named_never_skipped(monkeypatch):
    class Broken:
        name, value, dist = "broken", "no_such_plugin_module", None

        def load(self):
            raise ModuleNotFoundError("No module named 'no_such_plugin_module'")

    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [Broken()])
    with pytest.raises(ConfigError) as err:
        registry.load_plugins(reload=True)
    text = str(err.value)
    assert "plugin 'broken' (no_such_plugin_module" in text and "failed to load" in text
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [])
    registry.load_plugins(reload=True)


def test_load_path_reads_module_and_attribute():
    assert load_path("os.path:join")("a", "b") == "a/b"
