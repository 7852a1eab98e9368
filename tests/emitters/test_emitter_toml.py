"""task.toml is Harbor's own dump, byte for byte, though only [task] and [metadata] are
serialised per task (``RenderCache.task_toml``): checked on values that stress the
TOML writer, as a skill's name, version or case id could."""

from __future__ import annotations

import tomllib

import pytest
from harbor.models.task.config import EnvironmentConfig, PackageInfo, TaskConfig

from aces_bench.emitters.harbor_task import RenderCache

NASTY = ['quote " and \\ backslash', "new\nline\ttab", "ünïcödé ☃", "[verifier]", "'''", '"""', "a = 1",
         "it's", "", "aces-slot-7d2e-0", '"aces-slot-7d2e-1"']


def _config(description: str, meta: dict, **env) -> TaskConfig:
    return TaskConfig(task=PackageInfo(name="aces/some-task", description=description), metadata={"aces": meta},
                      environment=EnvironmentConfig(**env))


@pytest.mark.parametrize("text", NASTY)
def test_per_task_tables_match_harbors_dump(text):
    cache = RenderCache()
    first = _config("plain", {"case_id": "one", "n": 1})
    assert cache.task_toml(first) == first.model_dump_toml()
    other = _config(text, {"case_id": text, "list": [text, 2], "staged": [{"name": text}], "nested": {"k": text}})
    out = cache.task_toml(other)
    assert out == other.model_dump_toml()
    assert tomllib.loads(out)["metadata"]["aces"]["case_id"] == text


def test_what_harbors_dump_cannot_write_fails_the_same_way():
    # The toml package raises IndexError on an ESC character (a bug of its own): the
    # template path must not hide or change that.
    config = _config("d", {"case_id": "\x1b[31m"})
    with pytest.raises(IndexError):
        config.model_dump_toml()
    cache = RenderCache()
    cache.task_toml(_config("d", {"case_id": "x"}))
    with pytest.raises(IndexError):
        cache.task_toml(config)


def test_a_changed_setting_gets_its_own_template():
    cache = RenderCache()
    for memory in (2048, 4096, 2048):
        config = _config("d", {"case_id": "x"}, memory_mb=memory)
        assert cache.task_toml(config) == config.model_dump_toml()
        assert f"memory_mb = {memory}" in cache.task_toml(config)


def test_empty_metadata_falls_back_to_harbors_dump():
    config = TaskConfig(task=PackageInfo(name="aces/t"))
    assert RenderCache().task_toml(config) == config.model_dump_toml()


@pytest.mark.parametrize("bad", ["esc \x1b[31m", "bell \x07", "del \x7f", "c1 \x85"])
def test_a_value_the_toml_writer_mangles_is_refused_not_written(bad):
    """The writer turns ESC into "x1b" without a word: the round trip of the per-task
    tables must refuse it, naming the key, rather than write another value."""
    from aces_bench.core.errors import EmitError

    cache = RenderCache()
    cache.task_toml(_config("d", {"case_id": "x"}))
    with pytest.raises(EmitError) as err:
        cache.task_toml(_config("d", {"case_id": "x", "skill_version": bad}))
    assert "metadata.aces.skill_version" in str(err.value)
    assert len(str(err.value).splitlines()) == 2  # the error and its fix


@pytest.mark.parametrize("text", NASTY)
def test_the_shape_given_with_the_text_is_the_shape_of_the_text(text):
    """``task_toml_shaped`` derives each text's shape from its template, parsed once:
    it must equal the shape parsing that very text gives."""
    from aces_bench.emitters.shape import config_shape

    cache = RenderCache()
    cache.task_toml(_config("first", {"case_id": "x"}))
    out, shape = cache.task_toml_shaped(_config(text, {"case_id": text, "n": 3, "list": [text, 1]}))
    assert shape is not None
    assert shape == config_shape(out)


def test_per_task_tables_of_every_structure_match_harbors_dump():
    """The per-task tables are filled into a template per structure: keys, order, types
    and non-string values each give another template, and a string value or key that
    looks like a slot stays what it is."""
    cache = RenderCache()
    metas = [
        {"case_id": "a", "n": 1, "flag": True, "ratio": 0.5, "list": ["x", 2, "y"]},
        {"case_id": "b", "n": 2, "flag": False, "ratio": 1.0, "list": ["x", "2", "y"]},
        {"n": 1, "case_id": "c", "flag": 1, "ratio": 1, "list": []},
        {"case_id": "d", "staged": [{"name": "s1", "v": ""}, {"name": "s2", "v": "1.0"}], "env": {"mcp": []}},
        {"case_id": "e", "staged": [{"name": "s1", "v": "it's"}], "env": {"mcp": ["a b"]}},
        {"aces-slot-7d2e-0": "aces-slot-7d2e-0", "aces-slot-7d2e-0 x": {"k": "aces-slot-7d2e-1"}},
    ]
    for i, meta in enumerate(metas * 2):
        config = _config(f"task {i}", meta)
        assert cache.task_toml(config) == config.model_dump_toml(), meta


def test_the_task_id_digest_takes_every_setting_as_harbors_dump_gives_it():
    """``_digest`` dumps the settings every task shares once per emit (``RenderCache.rest``):
    the hash must be the one over the whole config's dump, and a copy with another
    setting must not be served the first one's."""
    import hashlib
    import json

    from aces_bench.emitters.harbor_task import _digest

    def whole(config):  # the id's settings part as it was computed per task
        h = hashlib.sha256()
        h.update(json.dumps({}, sort_keys=True).encode())
        settings = config.model_dump(mode="json", exclude={"metadata": True, "task": {"name"}})
        h.update(json.dumps(settings, sort_keys=True, default=str).encode())
        return h.hexdigest()

    cache = RenderCache()
    base = _config("d", {"case_id": "x"})
    copies = [base, base.model_copy(update={"task": PackageInfo(name="aces/other", description="e")}),
              base.model_copy(update={"environment": EnvironmentConfig(memory_mb=4096)}),
              base.model_copy(update={"task": None}), TaskConfig(environment=EnvironmentConfig(cpus=2))]
    for config in copies * 2:
        assert _digest({}, {}, config, cache) == whole(config)
    assert len({_digest({}, {}, c, cache) for c in copies}) == len(copies)
