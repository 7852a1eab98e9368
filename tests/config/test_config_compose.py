"""Every config group option composes into a valid RunSpec; typos fail early and clearly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.config.schema import GROUP_SCHEMAS
from aces_bench.core.errors import ConfigError
from aces_bench.study.preflight import preflight_local_agent

CONF = Path(__file__).resolve().parents[2] / "conf"

# Overrides an option needs to be complete (mandatory values a user must give).
NEEDS = {
    ("skill", "custom"): ["skill.paths=[tests/fixtures/skills]"],
    ("model", "openai-compatible"): ["model.name=openai/test", "model.base_url=http://127.0.0.1:9/v1"],
    ("workspace", "group"): ["decoys=paper"],
    ("judge", "litellm"): ["judge.model=openai/test"],
    ("harness", "harbor"): ["harness.agent=aider", "model=gpt-4o", "backend=docker"],
    ("backend", "gke"): ["backend.kwargs.cluster_name=c", "backend.kwargs.region=us-central1",
                         "backend.kwargs.registry_name=r"],
}
LLM_HARNESSES = {"terminus-2", "claude-code", "codex", "opencode"}
INSTALLED_HARNESSES = {"claude-code", "codex", "opencode"}


def options():
    for group in GROUP_SCHEMAS:
        for path in sorted((CONF / group).glob("*.yaml")):
            yield group, path.stem


@pytest.mark.parametrize(("group", "option"), list(options()))
def test_every_option_composes_into_a_run_spec(group, option, tmp_path):
    overrides = [f"{group}={option}", *NEEDS.get((group, option), [])]
    if group == "harness" and option in LLM_HARNESSES:
        # A harness is paired with a model of its own API (claude-code speaks Anthropic Messages).
        overrides.append("model=claude-sonnet" if option == "claude-code" else "model=gpt-4o")
    if group == "harness" and option in INSTALLED_HARNESSES:
        overrides.append("backend=docker")  # they install themselves: not on backend=local
    spec = compose_spec(overrides, output_dir=tmp_path)
    assert spec.choices == {} or isinstance(spec.choices, dict)
    assert getattr(spec, group) is not None
    assert spec.model_config.get("frozen") is True


def test_every_group_has_options():
    for group in GROUP_SCHEMAS:
        assert list((CONF / group).glob("*.yaml")), f"conf/{group} has no options"


def test_misspelled_key_fails_at_compose_time(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness.agnet=terminus-2"], output_dir=tmp_path)
    assert "harness.agnet" in str(err.value)


def test_unknown_option_lists_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness=refrence"], output_dir=tmp_path)
    text = str(err.value)
    assert "harness/refrence" in text
    assert "reference" in text and "terminus-2" in text
    assert "base_harness" not in text


def test_unknown_backend_option(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["backend=dockr"], output_dir=tmp_path)
    assert "backend/dockr" in str(err.value) and "docker" in str(err.value)


def test_invalid_value_is_reported_as_a_dotted_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["workspace.mode=grup", "study.n_attempts=0"], output_dir=tmp_path)
    text = str(err.value)
    assert "workspace.mode: Input should be 'isolation' or 'group' (got 'grup')" in text
    assert "study.n_attempts: Input should be greater than or equal to 1 (got 0)" in text


def test_unknown_harbor_agent_name_lists_valid_agents(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness=terminus-2", "harness.agent=terminus-9", "model=gpt-4o"], output_dir=tmp_path)
    assert "unknown Harbor agent 'terminus-9'" in str(err.value)
    assert "terminus-2" in str(err.value)


def test_unknown_environment_type(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["backend=docker", "backend.type=dockerz"], output_dir=tmp_path)
    assert "unknown Harbor environment type 'dockerz'" in str(err.value)


def test_llm_harness_without_model_is_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness=terminus-2"], output_dir=tmp_path)
    assert "needs a model" in str(err.value)


def test_missing_mandatory_value_names_the_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["skill=custom"], output_dir=tmp_path)
    assert "skill.paths" in str(err.value)


def test_group_mode_without_decoys_is_refused(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["workspace=group"], output_dir=tmp_path)
    assert "decoys=paper" in str(err.value)


def test_defaults_are_the_offline_embedded_study(tmp_path):
    spec = compose_spec([], output_dir=tmp_path)
    assert spec.harness.name == "reference"
    assert spec.backend.name == "local"
    assert spec.judge.kind == "heuristic"
    assert spec.model.name is None
    assert all(p.is_dir() for p in spec.skill.paths)


def test_installed_agents_run_on_the_local_backend_only_from_the_cli_cache(tmp_path):
    for harness in ("claude-code", "codex", "opencode"):
        model = "model=gpt-4o" if harness == "codex" else "model=claude-sonnet"  # codex speaks Responses only
        spec = compose_spec([f"harness={harness}", model], output_dir=tmp_path)
        assert spec.harness.cli == harness
    # An installed agent with no provisioned CLI still cannot set itself up offline: a
    # run refuses it before emitting (reading such a spec does not import Harbor's agents).
    spec = compose_spec(["harness=harbor", "harness.agent=aider", "model=gpt-4o"], output_dir=tmp_path)
    with pytest.raises(ConfigError) as err:
        preflight_local_agent(spec)
    assert "installs itself inside the environment" in str(err.value)
    assert "aces-bench agents install" in str(err.value)
    with pytest.raises(ConfigError, match="unknown agent CLI 'claud'; valid: claude-code, codex, opencode"):
        compose_spec(["harness=claude-code", "model=claude-sonnet", "harness.cli=claud"], output_dir=tmp_path)
    spec = compose_spec(["harness=claude-code", "model=claude-sonnet", "backend=docker"], output_dir=tmp_path)
    # Harbor's own agent with aces-bench's additions (bundled skills, what the model was shown).
    assert spec.harness.import_path == "aces_bench.agents.installed:ClaudeCode"


def test_generic_harbor_harness_takes_any_agent_name(tmp_path):
    spec = compose_spec(["harness=harbor", "harness.agent=aider", "model=gpt-4o", "backend=docker"],
                        output_dir=tmp_path)
    assert (spec.harness.name, spec.harness.agent, spec.harness.label) == ("aider", "aider", "aider (Harbor agent)")
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness=harbor", "model=gpt-4o", "backend=docker"], output_dir=tmp_path)
    assert "'harness.name' refers to a value that is unset" in str(err.value)


def test_reading_a_spec_does_not_import_harbors_agents(tmp_path):
    """Whether an agent installs itself is asked on the run path only (its answer imports
    Harbor's whole agent factory, which reports and record readers must not pay for)."""
    code = (
        "import sys\n"
        "from aces_bench.config.compose import compose_spec\n"
        "from aces_bench.config.spec import RunSpec\n"
        f"spec = compose_spec(['harness=harbor', 'harness.agent=aider', 'model=gpt-4o'], output_dir={str(tmp_path)!r})\n"
        "RunSpec.model_validate_json(spec.model_dump_json())\n"
        "print('harbor.agents.factory' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_removed_sequential_spending_key_is_refused_with_why_and_old_records_still_read(tmp_path):
    # study.sequential_spending went with alpha spending (the sequential gate reads its own e-value).
    with pytest.raises(ConfigError) as err:
        compose_spec(["study.sequential_spending=hsd"], output_dir=tmp_path)
    assert err.value.where == "study.sequential_spending" and "was removed" in str(err.value)
    from aces_bench.config.spec import RunSpec

    spec = compose_spec([], output_dir=tmp_path)
    old = spec.model_dump(mode="json")
    old["study"]["sequential_spending"] = "hsd"  # a provenance.json written before the removal
    assert RunSpec.model_validate(old).study.sequential_spending == "hsd"
