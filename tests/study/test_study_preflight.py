"""One preflight step: every problem that refuses a study, at once, before anything is emitted or run."""

from __future__ import annotations

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError
from aces_bench.study.entry import run_study
from aces_bench.study.preflight import PreflightError


def test_every_problem_is_reported_at_once_and_nothing_is_emitted(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ACES_TEST_NO_SUCH_JUDGE_KEY", raising=False)
    out = tmp_path / "study"
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o", "model.name=openai/aces-no-such-model",
                         "study.max_cost_usd=1", "judge=litellm",
                         "judge.model=openai/gpt-4o-mini", "judge.api_key_env=ACES_TEST_NO_SUCH_JUDGE_KEY"],
                        output_dir=out)
    with pytest.raises(PreflightError) as err:
        run_study(spec)
    text = str(err.value)
    assert text.startswith("this study cannot start: 3 problems (nothing was emitted or run)")
    assert "judge.api_key_env names ACES_TEST_NO_SUCH_JUDGE_KEY, which is not set" in text
    assert "model.api_key_env names OPENAI_API_KEY, which is not set" in text
    assert "study.max_cost_usd=1.0 is set but openai/aces-no-such-model has no price in litellm's cost map" in text
    assert [type(p).__name__ for p in err.value.problems] == ["ConfigError", "ConfigError", "RunError"]
    assert not (out / "tasks").exists() and not (out / "jobs").exists()


def test_one_problem_is_raised_as_itself(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o"], output_dir=tmp_path / "study")
    with pytest.raises(ConfigError) as err:
        run_study(spec)
    assert not isinstance(err.value, PreflightError)
    assert "model.api_key_env names OPENAI_API_KEY, which is not set" in str(err.value)
    assert not (tmp_path / "study" / "tasks").exists()


def test_a_design_is_refused_before_its_first_member_runs(tmp_path, monkeypatch):
    """Every member of a design passes its preflight before the first one runs: a later
    member's missing key stops the design with nothing emitted for any member."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "aces_paper"
    spec = compose_spec(["study=aces_paper", "study.harness_models={}", "model=gpt-4o",
                         "study.axes.harnesses=[reference,terminus-2]", "study.axes.stress_harnesses=[reference]",
                         "study.axes.stress_sizes=[1]", "study.axes.slice_harness=[reference]",
                         "study.axes.slice_models=['model=gpt-4o']", "report=false"],
                        output_dir=out)
    with pytest.raises(ConfigError) as err:
        run_study(spec)
    assert "model.api_key_env names OPENAI_API_KEY, which is not set" in str(err.value)
    assert not any(out.glob("*/tasks")) and not any(out.glob("*/jobs"))
