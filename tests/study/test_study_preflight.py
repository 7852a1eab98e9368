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


def test_a_model_endpoint_that_does_not_answer_is_named_before_anything_is_written(tmp_path, monkeypatch):
    """Issue 36: a wrong model.base_url was found after 88 s and three failed trials, unnamed."""
    import socket
    import time

    from aces_bench.core.errors import RunError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    with socket.socket() as s:  # a port nothing listens on: bound, then closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    out = tmp_path / "study"
    spec = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                         f"model.base_url={url}"], output_dir=out)
    start = time.monotonic()
    with pytest.raises(RunError) as err:
        run_study(spec)
    assert time.monotonic() - start < 10
    assert f"the model endpoint {url} does not answer" in str(err.value) and "model.base_url" in str(err.value)
    assert not (out / "tasks").exists() and not (out / "jobs").exists()


def test_an_endpoint_that_answers_any_status_passes(tmp_path):
    """A 404 or 401 on the bare base URL is an answer: the check is about reaching the server."""
    import http.server
    import threading

    from aces_bench.study.preflight import _endpoint

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server hook's name
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        spec = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                             f"model.base_url=http://127.0.0.1:{httpd.server_address[1]}"], output_dir=tmp_path)
        _endpoint(spec)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_cost_cap_the_with_skill_trials_alone_pass_is_refused_before_any_task_is_written(tmp_path, monkeypatch):
    """Issue 36: the refusal came after 20 s of writing task folders. The with-skill trials run whatever the
    baseline store holds, so when they alone pass the cap the study is refused in preflight."""
    from aces_bench.core.errors import RunError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    out = tmp_path / "study"
    spec = compose_spec(["harness=terminus-2", "model=gpt-4o", "study.max_cost_usd=0.0001"], output_dir=out)
    with pytest.raises(RunError) as err:
        run_study(spec)
    assert "the trials no baseline store can supply (16 of 32) are estimated at $" in str(err.value)
    assert "above study.max_cost_usd=$0.0001; nothing was written" in str(err.value)
    assert not (out / "tasks").exists() and not (out / "jobs").exists()


def test_a_design_over_its_budget_is_refused_in_the_same_list_as_its_members_problems(tmp_path, monkeypatch):
    """The design's cost is checked from its members' plans and listed with their preflight
    problems: one refusal with both, not the budget after the members are fixed."""
    from aces_bench.core.errors import RunError
    from aces_bench.study.design import compose_members, member_cost, planned_trials

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "aces_paper"
    overrides = ["study=aces_paper", "study.harness_models={}", "model=gpt-4o",
                 "study.axes.harnesses=[reference,terminus-2]", "study.axes.stress_harnesses=[reference]",
                 "study.axes.stress_sizes=[1]", "study.axes.slice_harness=[reference]",
                 "study.axes.slice_models=['model=gpt-4o']", "report=false"]
    members = [ms for _, ms in compose_members(compose_spec(overrides, output_dir=out)).values()]
    costs = [member_cost(ms, planned_trials(ms)) for ms in members]
    total = sum(costs)
    # Each member's own trials (the with-skill half, at most) stay under the cap; the design's do not.
    cap = 0.6 * total
    assert max(costs) / 2 <= cap < total
    spec = compose_spec([*overrides, f"study.max_cost_usd={cap}"], output_dir=out)
    with pytest.raises(PreflightError) as err:
        run_study(spec)
    assert [type(p).__name__ for p in err.value.problems] == ["ConfigError", "RunError"]
    assert "model.api_key_env names OPENAI_API_KEY, which is not set" in str(err.value)
    assert isinstance(err.value.problems[1], RunError)
    assert "the design's estimated cost $" in str(err.value.problems[1])
    assert not any(out.glob("*/tasks")) and not any(out.glob("*/jobs"))
