"""The litellm judge end to end against a local OpenAI-compatible server (no mocks)."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.judges import Reply, as_json, good_run, grading_input

from aces_bench.graders.accuracy import grade_accuracy
from aces_bench.graders.judged import grade_judged
from aces_bench.judges.litellm_judge import LiteLLMJudge, parse_reply
from aces_bench.judges.prompts import YesNo
from aces_bench.judges.spec import JudgeSpec

pytestmark = pytest.mark.timeout(60)
GOOD = as_json({"answer": "yes", "reason": "the script ran at step 3"})


def make_judge(
    base_url: str, tmp_path=None, **spec_kw
) -> tuple[LiteLLMJudge, list[float]]:
    delays: list[float] = []

    async def recording_sleep(delay: float) -> None:
        delays.append(delay)
        await asyncio.sleep(delay)

    spec = JudgeSpec(
        kind="litellm",
        model="openai/test-judge",
        base_url=base_url,
        cache_dir=str(tmp_path / "cache") if tmp_path else None,
        **spec_kw,
    )
    return LiteLLMJudge(spec, backoff_base=0.05, sleep=recording_sleep), delays


def ask(judge: LiteLLMJudge, user: str = "did it run?"):
    return asyncio.run(
        judge.ask(
            prompt_id="behavior",
            prompt_version="1",
            system="You judge.",
            user=user,
            schema=YesNo,
        )
    )


def test_good_reply_is_validated_and_request_is_deterministic(llm_server):
    state, url = llm_server
    state.push(Reply(GOOD))
    judge, _ = make_judge(url)
    out = ask(judge)
    assert out.value == YesNo(answer="yes", reason="the script ran at step 3")
    assert (
        out.error is None
        and out.judge == "litellm:openai/test-judge"
        and not out.cached
    )
    body = state.requests[0]
    assert body["model"] == "test-judge" and body["temperature"] == 0.0
    assert (
        "JSON Schema" in body["messages"][0]["content"]
        and '"answer"' in body["messages"][0]["content"]
    )
    assert body["messages"][1] == {"role": "user", "content": "did it run?"}


def test_malformed_reply_is_repaired_with_the_validation_error(llm_server):
    state, url = llm_server
    state.push(
        Reply('{"answer": "maybe", "reason": "unsure"}'), Reply(f"```json\n{GOOD}\n```")
    )
    judge, _ = make_judge(url)
    out = ask(judge)
    assert out.value is not None and out.value.answer == "yes"
    assert len(state.requests) == 2
    repair = state.requests[1]["messages"]
    assert repair[2] == {
        "role": "assistant",
        "content": '{"answer": "maybe", "reason": "unsure"}',
    }
    assert (
        "did not validate" in repair[3]["content"] and "answer" in repair[3]["content"]
    )


def test_malformed_reply_not_repaired_leaves_metric_unscored(llm_server):
    state, url = llm_server
    state.push(Reply("I think yes."), Reply("still prose, no JSON"))
    judge, _ = make_judge(url)
    out = ask(judge)
    assert out.value is None and "did not validate after one repair" in out.error
    assert len(state.requests) == 2  # exactly one repair, no more

    state.push(Reply("not json"), Reply("{}"))
    result = asyncio.run(grade_accuracy(grading_input(good_run()), judge))
    assert result.score is None and result.grader == "litellm:openai/test-judge"
    assert "did not validate after one repair" in result.unscored_reason


def test_rate_limit_then_success_backs_off(llm_server):
    state, url = llm_server
    state.push(
        Reply("slow down", status=429), Reply("slow down", status=429), Reply(GOOD)
    )
    judge, delays = make_judge(url, max_retries=4)
    out = ask(judge)
    assert out.value is not None and len(state.requests) == 3
    assert len(delays) == 2 and 0.05 <= delays[0] <= 0.075 and 0.1 <= delays[1] <= 0.15
    gaps = [b - a for a, b in zip(state.arrivals, state.arrivals[1:], strict=False)]
    assert all(g >= d * 0.95 for g, d in zip(gaps, delays, strict=False))


def test_rate_limit_beyond_max_retries_is_unscored(llm_server):
    state, url = llm_server
    state.push(*[Reply("slow down", status=429)] * 3)
    judge, delays = make_judge(url, max_retries=2)
    out = ask(judge)
    assert (
        out.value is None
        and "after 3 attempt(s)" in out.error
        and "RateLimitError" in out.error
    )
    assert len(state.requests) == 3 and len(delays) == 2


def test_backoff_jitter_is_seeded():
    spec = JudgeSpec(kind="litellm", model="openai/x")
    a = [LiteLLMJudge(spec, seed=7).backoff_delay(i) for i in range(4)]
    b = [LiteLLMJudge(spec, seed=7).backoff_delay(i) for i in range(4)]
    assert a == b and all(2**i <= d <= 1.5 * 2**i for i, d in enumerate(a))


def test_timeout_is_unscored_with_cause(llm_server):
    state, url = llm_server
    state.push(Reply(GOOD, delay=3.0))
    judge, delays = make_judge(url, timeout_sec=0.5)
    start = time.monotonic()
    out = ask(judge)
    assert out.value is None and "timed out after 0.5s" in out.error
    assert time.monotonic() - start < 2.5 and delays == []  # not retried


def test_second_run_hits_the_persistent_cache(llm_server, tmp_path):
    state, url = llm_server
    state.push(Reply(GOOD))
    first, _ = make_judge(url, tmp_path)
    assert not ask(first).cached
    second, _ = make_judge(
        url, tmp_path, max_retries=0
    )  # a new process would see the same files
    out = ask(second)
    assert out.cached and out.value.answer == "yes"
    assert len(state.requests) == 1 and second.calls == 0
    miss = ask(
        second, user="a different input"
    )  # a miss does call (script empty -> 500)
    assert miss.value is None and "InternalServerError" in miss.error
    assert len(state.requests) == 2


def test_concurrency_is_bounded(llm_server):
    state, url = llm_server
    state.push(*[Reply(GOOD, delay=0.3)] * 5)
    judge, _ = make_judge(url, max_concurrency=2)

    async def many():
        return await asyncio.gather(
            *(
                judge.ask(
                    prompt_id="b",
                    prompt_version="1",
                    system="s",
                    user=f"u{i}",
                    schema=YesNo,
                )
                for i in range(5)
            )
        )

    outs = asyncio.run(many())
    assert all(o.value is not None for o in outs)
    assert state.peak_in_flight == 2


def test_api_key_comes_from_the_named_env_var_and_is_not_stored(
    llm_server, monkeypatch
):
    state, url = llm_server
    state.push(Reply(GOOD))
    monkeypatch.setenv("ACES_TEST_JUDGE_KEY", "sk-test-123")
    judge, _ = make_judge(url, api_key_env="ACES_TEST_JUDGE_KEY")
    assert "sk-test-123" not in repr(vars(judge))
    ask(judge)
    assert state.headers[0].get("authorization") == "Bearer sk-test-123"


def test_grade_judged_end_to_end_over_litellm(llm_server, tmp_path):
    state, url = llm_server
    accuracy = {
        k: {"answer": "yes", "reason": f"{k} ok"}
        for k in (
            "action_correct",
            "facts_consistent",
            "task_addressed",
            "actionable",
        )
    }
    accuracy["actionable"] = {"answer": "no", "reason": "no next step"}

    def route(body: dict) -> Reply:
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        # RAGAS's own prompt texts, when the optional extra is installed
        if "identify the user_goal" in user:
            return Reply(
                as_json({"user_goal": "reconcile", "end_state": "reported 1234.50"})
            )
        if "identify if they are the same" in user:
            return Reply(as_json({"reason": "same total", "verdict": "1"}))
        if "four questions" in system:
            return Reply(as_json(accuracy))
        if "state the user_goal" in system:
            return Reply(
                as_json({"user_goal": "reconcile", "end_state": "reported 1234.50"})
            )
        if "compare a desired outcome" in system:
            return Reply(as_json({"achieved": "yes", "reason": "same total"}))
        return Reply(GOOD)

    state.responder = route
    judge, _ = make_judge(url, tmp_path)
    results = asyncio.run(grade_judged(grading_input(good_run()), judge))
    assert results["accuracy"].score == pytest.approx(0.75)
    assert results["goal_accuracy"].score == 1.0
    assert results["behavior_check"].score == 1.0
    assert {r.grader for r in results.values()} == {"litellm:openai/test-judge"}
    n = len(state.requests)
    assert n == 1 + 2 + 2  # accuracy, two goal steps, two behaviors (own + security)
    again = asyncio.run(grade_judged(grading_input(good_run()), judge))
    assert len(state.requests) == n  # all from cache
    assert {k: r.score for k, r in again.items()} == {
        k: r.score for k, r in results.items()
    }
    assert "reply from cache" in again["accuracy"].evidence[-1].detail


def test_parse_reply_accepts_prose_around_one_object():
    assert parse_reply(f"Here you go: {GOOD} hope that helps", YesNo).answer == "yes"
    with pytest.raises(ValueError):
        parse_reply("", YesNo)
