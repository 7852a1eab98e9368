"""Sweep member folders for any override value, the reference agent beside model-driven
harnesses, and one-line errors for a launcher or backend extra that is not installed."""

from __future__ import annotations

import importlib.util

import pytest

from aces_bench.config.compose import compose_config, compose_spec
from aces_bench.config.spec import MODEL_NOT_APPLICABLE
from aces_bench.config.store import MAX_MEMBER_NAME, member_dirname
from aces_bench.core.errors import BackendError, ConfigError
from aces_bench.study.preflight import preflight_backend_extra

EXCLUDE = ["study", "emit_only", "report", "skill.paths", "backend.kwargs.root_parent"]


def test_member_names_are_one_safe_path_component_and_distinct():
    a = member_dirname(["harness=terminus-2", "model.name=openai/a"], EXCLUDE)
    b = member_dirname(["harness=terminus-2", "model.name=openai/b"], EXCLUDE)
    under = member_dirname(["harness=terminus-2", "model.name=openai_a"], EXCLUDE)
    assert "/" not in a and a.startswith("harness=terminus-2,model.name=openai_a~")
    assert len({a, b, under}) == 3  # the hash keeps openai/a and openai_a apart
    spaced = member_dirname(["study.description='two words'", "harness=codex"], ["study"])
    assert " " not in spaced and "'" not in spaced
    url = member_dirname(["model.base_url=http://127.0.0.1:8000/v1"], [])
    assert "/" not in url and ":" not in url and "\\" not in url


def test_plain_names_are_kept_as_hydra_writes_them():
    assert member_dirname(["workspace=group", "harness=reference", "report=false"], EXCLUDE) == \
        "harness=reference,workspace=group"
    assert member_dirname([], EXCLUDE) == "default"


def test_long_lists_stay_under_the_file_name_limit_and_distinct():
    cases = [f"skill.cases=[{','.join(f'case-{i}' for i in range(n))}]" for n in (200, 201)]
    names = [member_dirname([c], []) for c in cases]
    assert all(len(n.encode()) < 255 for n in names) and len(names[0]) <= MAX_MEMBER_NAME + 9
    assert names[0] != names[1]


def test_a_harness_without_a_model_has_one_member_for_every_model():
    a = member_dirname(["harness=reference", "model=openai-compatible", "model.name=openai/a"], EXCLUDE,
                       requires_model=False)
    b = member_dirname(["harness=reference", "model=openai-compatible", "model.name=openai/b"], EXCLUDE,
                       requires_model=False)
    assert a == b == "harness=reference"


def test_the_reference_agent_records_the_model_as_not_applicable():
    spec = compose_spec(["harness=reference", "model=openai-compatible", "model.name=openai/a",
                         "model.base_url=http://127.0.0.1:9/v1"], output_dir="out")
    assert spec.model.name is None and spec.model.base_url is None and spec.model.display == MODEL_NOT_APPLICABLE
    llm = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                        "model.base_url=http://127.0.0.1:9/v1"], output_dir="out")
    assert llm.model.name == "openai/a" and llm.model.base_url == "http://127.0.0.1:9/v1"


def test_a_launcher_whose_plugin_is_missing_names_the_pip_extra():
    if importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is not None:
        pytest.skip("hydra-ray-launcher is installed here")
    with pytest.raises(ConfigError) as err:
        compose_config(["hydra/launcher=ray_cluster"])
    assert str(err.value).splitlines() == [
        "hydra/launcher: launcher ray_cluster needs the Hydra launcher plugin 'ray', which is not installed",
        "  fix: pip install 'aces-bench[ray]'",
    ]


@pytest.mark.parametrize(("backend", "module", "extra"), [
    ("modal", "modal", "modal"), ("daytona", "daytona", "daytona"), ("e2b", "e2b", "e2b"),
    ("runloop", "runloop_api_client", "runloop"),
])
def test_a_backend_whose_sdk_is_missing_names_the_pip_extra(backend, module, extra):
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    spec = compose_spec([f"backend={backend}"], output_dir="out")
    with pytest.raises(BackendError) as err:
        preflight_backend_extra(spec)
    assert str(err.value).splitlines() == [
        f"backend: backend={backend} needs the {module} package, which is not installed",
        f"  fix: pip install 'aces-bench[{extra}]' (or choose backend=local or backend=docker)",
    ]
