"""What each harness showed its model and what it spent, read from the records the real CLIs wrote.

The fixtures under ``fixtures/traces/`` are files the pinned CLIs (claude-code 2.1.197,
codex 0.171.0, opencode 1.18.33) left in real paired trials on backend=local, driven by
a scripted loopback server written apart from the project's (bundled skills off; the
``keep`` ones with bundled skills kept). Only codex's own instruction prose was cut from
its rollouts; every line aces-bench reads is as the CLI wrote it.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from aces_bench.agents.traces import (
    available_skills,
    claude_code_trace,
    codex_trace,
    opencode_trace,
    response_usage,
    shown_skills,
)
from aces_bench.core.modes import trial_class
from aces_bench.core.pricing import Usage, cost_of
from aces_bench.grading.grade import proof_of_load

TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
TARGET = "csv-column-sum"


@pytest.mark.parametrize("reader,harness", [(claude_code_trace, "claude-code"), (codex_trace, "codex"),
                                            (opencode_trace, "opencode")])
def test_with_skill_lists_only_the_target_and_the_baseline_nothing(reader, harness):
    assert reader(TRACES / harness / "with_skill").visible == [TARGET]
    assert reader(TRACES / harness / "baseline").visible == []


@pytest.mark.parametrize("harness,bundled", [
    ("claude-code", {"code-review", "security-review", "deep-research", "init", "review"}),
    ("codex", {"imagegen", "openai-docs", "skill-creator", "skill-installer"}),
    ("opencode", {"customize-opencode"}),
])
def test_bundled_skills_kept_are_recorded(harness, bundled):
    trace = {"claude-code": claude_code_trace, "codex": codex_trace, "opencode": opencode_trace}[harness](
        TRACES / harness / "keep-baseline")
    assert trace.visible is not None and bundled <= set(trace.visible), trace.visible
    assert TARGET not in trace.visible


def test_a_missing_record_is_unknown_not_empty(tmp_path):
    for reader in (claude_code_trace, codex_trace, opencode_trace):
        assert reader(tmp_path).visible is None


def test_claude_code_usage_is_every_model_of_its_result_event():
    trace = claude_code_trace(TRACES / "claude-code" / "with_skill")
    assert [(u.model, u.input_tokens, u.output_tokens) for u in trace.usage] == [("claude-sonnet-4-5", 3000, 300)]
    assert trace.own_cost_usd == pytest.approx(0.0135)  # claude-code's own figure, kept as evidence only


def test_codex_usage_sums_its_responses():
    trace = codex_trace(TRACES / "codex" / "with_skill")
    assert [(u.model, u.input_tokens, u.output_tokens, u.calls) for u in trace.usage] == [("gpt-4o", 3000, 300, 3)]


def test_opencode_usage_counts_its_title_call():
    """opencode's title call goes to a small model with no tools: it is counted, at that model's price."""
    trace = opencode_trace(TRACES / "opencode" / "with_skill")
    by = {u.model: u for u in trace.usage}
    assert set(by) == {"claude-haiku-4-5-20251001", "claude-sonnet-4-5"}
    assert (by["claude-haiku-4-5-20251001"].input_tokens, by["claude-haiku-4-5-20251001"].calls) == (1000, 1)
    assert (by["claude-sonnet-4-5"].input_tokens, by["claude-sonnet-4-5"].calls) == (3000, 3)
    cost = cost_of(trace.usage)
    assert cost.by_model["claude-haiku-4-5-20251001"] == pytest.approx(1000 * 1e-6 + 100 * 5e-6)


@pytest.mark.parametrize("text,expected", [
    # Anthropic stream: input (cache reads and writes included) from message_start, output from message_delta
    ('{"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1,'
     '"cache_read_input_tokens":90,"cache_creation_input_tokens":5}}}\n'
     '{"type":"message_delta","usage":{"output_tokens":42}}', (105, 42, 90, 5)),
    # OpenAI Responses: input includes the cached tokens
    ('data: {"type":"response.completed","response":{"usage":{"input_tokens":100,'
     '"input_tokens_details":{"cached_tokens":60},"output_tokens":7}}}', (100, 7, 60, 0)),
    # Chat Completions, last chunk
    ('data: {"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":5,'
     '"prompt_tokens_details":{"cached_tokens":20}}}\ndata: [DONE]', (50, 5, 20, 0)),
])
def test_response_usage_in_every_wire_format(text, expected):
    u = response_usage(text, "m")
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == expected
    assert response_usage("data: [DONE]", "m") is None


def test_available_skills_block():
    text = "Task\n<available_skills>\n  <skill>\n    <name>a&amp;b</name>\n  </skill>\n  <skill><name>c</name>" \
           "</skill>\n</available_skills>\n<available_skills><skill><name>z</name></skill></available_skills>"
    assert available_skills(text) == ["a&b", "c"]  # the first block only
    assert available_skills("no block") is None


def _result(meta=None, name="claude-code"):
    agent = SimpleNamespace(metadata=meta, n_input_tokens=None, n_output_tokens=None)
    return SimpleNamespace(agent_result=agent, agent_info=SimpleNamespace(name=name))


def test_proof_of_load_makes_a_with_skill_trial_not_shown_its_target_a_failure_of_its_arm():
    # Issue 33: such a trial was excluded (setup_error, out of the headline and the gate) even
    # when the skill caused it; it is now the with-skill arm's failure, and a baseline shown
    # the target counts as it ran, flagged by grading (behaviour change is the point).
    shown = _result({"aces_visible_skills": ["code-review"], "aces_visible_source": "s"})
    load = proof_of_load(shown, None, target=TARGET, side="with_skill", status="ok")
    assert (load.listed, load.status) == (False, "setup_error")
    assert load.cause == ("setup: the harness did not list the target skill csv-column-sum to the model "
                          "(it listed code-review; s): the skill's own setup failed, a failure of the with-skill arm")
    assert trial_class(load.status) == "arm_failure"
    # An empty listing is no proof of infrastructure: a skill can break the whole listing.
    empty = proof_of_load(_result({"aces_visible_skills": []}), None, target=TARGET, side="with_skill", status="ok")
    assert (empty.status, trial_class(empty.status)) == ("setup_error", "arm_failure")
    leak = _result({"aces_visible_skills": [TARGET]})
    seen = proof_of_load(leak, None, target=TARGET, side="baseline", status="ok")
    assert (seen.listed, seen.status) == (True, None)
    fine = proof_of_load(leak, None, target=TARGET, side="with_skill", status="ok")
    assert (fine.shown, fine.listed, fine.status) == ([TARGET], True, None)
    # A harness that keeps no record: unknown, never a failure.
    unknown = proof_of_load(_result({}, name="aider"), None, target=TARGET, side="with_skill", status="ok")
    assert (unknown.shown, unknown.listed, unknown.status) == (None, None, None)
    # A harness that never started (infrastructure shown) is not judged on what it listed: it stays excluded.
    assert proof_of_load(shown, None, target=TARGET, side="with_skill", status="infra_error").status is None
    assert trial_class("infra_error") == "excluded"


def test_shown_skills_reads_terminus_from_its_trajectory(tmp_path):
    from harbor.models.trajectories import Agent, Step, Trajectory

    steps = [Step(step_id=1, source="user", message="do it\n<available_skills><skill><name>x</name></skill>"
                                                     "</available_skills>")]
    (tmp_path / "agent").mkdir()
    trajectory = Trajectory(session_id="s", agent=Agent(name="terminus-2", version="1"), steps=steps)
    (tmp_path / "agent" / "trajectory.json").write_text(trajectory.model_dump_json())
    names, source = shown_skills(_result(None, name="terminus-2"), tmp_path)
    assert names == ["x"] and "terminus-2" in source


def test_one_price_for_the_same_tokens_whatever_the_harness():
    """claude-code reports its own cost, codex none: both are priced by the same function."""
    same = [Usage("claude-sonnet-4-5", 2000, 200)]
    assert cost_of(same).usd == pytest.approx(2000 * 3e-6 + 200 * 15e-6)
    assert cost_of([Usage("anthropic/claude-sonnet-4-5", 2000, 200)]).usd == pytest.approx(cost_of(same).usd)
    assert cost_of([Usage("no-such-model", 10, 1)]).unpriced == ("no-such-model",)
