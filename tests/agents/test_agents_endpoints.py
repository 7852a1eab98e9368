"""One meaning of model.base_url, and a harness paired only with a model of its own API."""

from __future__ import annotations

import pytest

from aces_bench.agents.endpoints import check_api, harness_base_url
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError
from aces_bench.run.runner import agent_config

HOST = "http://127.0.0.1:8000"


@pytest.mark.parametrize("given", [HOST, HOST + "/", HOST + "/v1", HOST + "/v1/"])
def test_a_host_with_or_without_v1_is_one_endpoint(given):
    assert harness_base_url("claude-code", None, "anthropic/claude-sonnet-4-5", given) == HOST  # SDK adds /v1/messages
    assert harness_base_url("codex", None, "openai/gpt-4o", given) == HOST + "/v1"  # codex adds /responses
    assert harness_base_url("opencode", None, "anthropic/claude-sonnet-4-5", given) == HOST + "/v1"
    assert harness_base_url(None, "terminus-2", "openai/gpt-4o", given) == HOST + "/v1"  # litellm openai/
    assert harness_base_url(None, "terminus-2", "anthropic/claude-sonnet-4-5", given) == HOST  # litellm anthropic/


def test_a_url_with_another_path_is_handed_over_as_written():
    url = "https://gateway.example.com/anthropic"
    assert harness_base_url("claude-code", None, "anthropic/claude-sonnet-4-5", url) == url
    assert harness_base_url("codex", None, "openai/gpt-4o", None) is None


def test_a_harness_and_a_model_of_another_api_are_refused_unless_a_gateway_translates(tmp_path):
    assert check_api("codex", "anthropic/claude-sonnet-4-5", None) == (
        "harness=codex calls the OpenAI Responses API but model 'anthropic/claude-sonnet-4-5' is an Anthropic "
        "model; pick a model of that API, or set model.api=openai-responses if model.base_url is a gateway that "
        "translates")
    assert "harness=claude-code calls the Anthropic Messages API but model 'openai/gpt-4o'" in check_api(
        "claude-code", "openai/gpt-4o", None)
    assert check_api("opencode", "openai/gpt-4o", None) is None  # opencode speaks both
    assert check_api("claude-code", "hosted_vllm/my-model", None) is None  # the name does not say: not refused
    with pytest.raises(ConfigError) as err:
        compose_spec(["harness=codex", "model=claude-sonnet"], output_dir=tmp_path)
    assert "harness=codex calls the OpenAI Responses API" in str(err.value)
    gateway = compose_spec(["harness=codex", "model=claude-sonnet", "model.api=openai-responses",
                            f"model.base_url={HOST}"], output_dir=tmp_path)
    assert gateway.model.api == "openai-responses"
    with pytest.raises(ConfigError, match="model.api=anthropic says the endpoint speaks the Anthropic Messages API, "
                                          "but harness=codex calls the OpenAI Responses API"):
        compose_spec(["harness=codex", "model=gpt-4o", "model.api=anthropic"], output_dir=tmp_path)


def test_the_agent_config_carries_the_harness_form_and_the_bundled_switch(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    spec = compose_spec(["harness=claude-code", "model=claude-sonnet", f"model.base_url={HOST}/v1",
                         "backend=docker"], output_dir=tmp_path)
    config = agent_config(spec)
    assert config.base_url == HOST
    assert config.kwargs["bundled_skills"] == "off"
    keep = compose_spec(["harness=codex", "model=gpt-4o", f"model.base_url={HOST}", "backend=docker",
                         "harness.bundled_skills=keep"], output_dir=tmp_path)
    config = agent_config(keep)
    assert (config.base_url, config.kwargs["bundled_skills"]) == (HOST + "/v1", "keep")
    with pytest.raises(ConfigError, match="harness.bundled_skills"):
        compose_spec(["harness=codex", "model=gpt-4o", "harness.bundled_skills=some"], output_dir=tmp_path)


def test_a_registered_profile_says_how_its_client_builds_the_url_and_where_its_skills_are_listed():
    # The harness facts live on profiles: a plugin's harness declares them, nothing else changes.
    from aces_bench.agents.profiles import HARNESSES, HarnessProfile, profile_named, trajectory_listers

    given = HOST + "/v1"
    profile = HarnessProfile(name="sdk-agent", agent="sdk-agent", appends_v1="anthropic",
                             lists_skills_in_trajectory=True, plugin_parts=("skills", "hooks"))
    HARNESSES.register("sdk-agent", profile)
    try:
        assert harness_base_url(None, "sdk-agent", "anthropic/claude-sonnet-4-5", given) == HOST
        assert harness_base_url(None, "sdk-agent", "openai/gpt-4o", given) == HOST + "/v1"
        assert "sdk-agent" in trajectory_listers()
        assert profile_named("sdk-agent").plugin_parts == ("skills", "hooks")
    finally:
        HARNESSES.unregister("sdk-agent")
    assert harness_base_url(None, "sdk-agent", "anthropic/claude-sonnet-4-5", given) == HOST + "/v1"
    assert "sdk-agent" not in trajectory_listers()
