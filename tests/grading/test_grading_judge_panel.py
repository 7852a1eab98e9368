"""A study graded by a judge panel (issue 27, point 6): every judged metric per judge, a stated
aggregation, and the panel's agreement (ICC with its interval, Cohen's kappa per pair) in the report.

Two litellm judges are scripted OpenAI-compatible servers that disagree on known items
(judge B passes the negative-control case judge A fails), the third is the offline
heuristic judge. The study is a real run of the reference agent on the local sandbox.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from support import judges

from aces_bench.config.compose import compose_spec
from aces_bench.graders.judged import aggregate_panel
from aces_bench.records.results import PER_JUDGE, MetricResult
from aces_bench.records.trials import read_grades
from aces_bench.stats.agreement import cohen_kappa, icc_a1
from aces_bench.study.entry import run_study

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"
FOUR = ("action_correct", "facts_consistent", "task_addressed", "actionable")


def _judge(passes) -> callable:
    """A scripted judge: every question answered yes when ``passes(user text)`` else no."""
    support = judges

    def route(body: dict) -> object:
        system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
        user = "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
        answer = "yes" if passes(user) else "no"
        if "four questions" in system:
            reply = {k: {"answer": answer, "reason": f"scripted {answer}"} for k in FOUR}
        elif "state the user_goal" in system:
            reply = {"user_goal": "sum the column", "end_state": "reported"}
        elif "compare a desired outcome" in system:
            reply = {"achieved": answer, "reason": f"scripted {answer}"}
        else:
            reply = {"answer": answer, "reason": f"scripted {answer}"}
        return support.Reply(json.dumps(reply))

    return route


@pytest.fixture
def two_judges():
    support = judges
    servers = []
    for passes in (lambda u: "141.75" in u,  # judge A: only the right total passes
                   lambda u: "141.75" in u or "How many lines" in u):  # judge B: also the line-count case
        state = support.ScriptedServer()
        state.responder = _judge(passes)
        servers.append((state, *support.start_server(state)))
    try:
        yield [(state, url) for state, _, url in servers]
    finally:
        for _, server, _ in servers:
            server.timer.cancel()
            server.shutdown()
            server.server_close()


def test_panel_aggregates_per_metric_and_keeps_each_judge():
    a = MetricResult(metric="accuracy", score=1.0, grader="litellm:a", sub_scores={"q": 1.0})
    b = MetricResult(metric="accuracy", score=0.5, grader="litellm:b", sub_scores={"q": 0.0})
    c = MetricResult(metric="accuracy", score=None, unscored_reason="abstained", grader="heuristic")
    out = aggregate_panel({"a": {"accuracy": a}, "b": {"accuracy": b}, "h": {"accuracy": c}}, "mean")["accuracy"]
    assert out.score == 0.75 and out.sub_scores == {"q": 0.5} and out.grader == "mean of 2 of 3 judges"
    assert out.details[PER_JUDGE]["h"]["unscored_reason"] == "abstained" and out.details["unscored_by"] == ["h"]
    median = aggregate_panel({"a": {"accuracy": a}, "b": {"accuracy": b}, "c": {"accuracy": b}}, "median")
    assert median["accuracy"].score == 0.5
    none = aggregate_panel({"h": {"accuracy": c}, "i": {"accuracy": c}}, "mean")["accuracy"]
    assert none.score is None and none.unscored_reason == "no judge of the panel scored it: h: abstained; i: abstained"


def test_icc_and_kappa_match_published_and_hand_counted_values():
    # Shrout & Fleiss (1979), 6 targets x 4 judges: ICC(2,1) = 0.29 [0.019, 0.76] (McGraw & Wong; R psych::ICC).
    sf = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    icc, (lo, hi), _ = icc_a1(sf)
    assert round(icc, 2) == 0.29 and round(lo, 3) == 0.019 and round(hi, 2) == 0.76
    # po = 1/2, pe = 0.25*0.75 + 0.75*0.25 = 0.375: kappa = (0.5 - 0.375) / 0.625 = 0.2
    kappa, ci, _ = cohen_kappa([True, False, False, False], [True, False, True, True])
    assert kappa == pytest.approx(0.2) and ci[0] < 0.2 < ci[1]
    assert icc_a1(np.array([[1.0, 1.0], [1.0, 1.0]]))[0] is None  # no variance: undefined, not 0


@pytest.mark.sandbox
def test_a_study_with_two_scripted_judges_and_the_heuristic_reports_their_agreement(tmp_path, two_judges,
                                                                                     monkeypatch):
    monkeypatch.setenv("JUDGE_A_KEY", "dummy")
    monkeypatch.setenv("JUDGE_B_KEY", "dummy")
    (a_state, a_url), (b_state, b_url) = two_judges
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE, skill)
    models = (f"[{{model: openai/judge-a, base_url: '{a_url}', api_key_env: JUDGE_A_KEY}},"
              f"{{model: openai/judge-b, base_url: '{b_url}', api_key_env: JUDGE_B_KEY}},heuristic]")
    out = tmp_path / "out"
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.cases=[explicit-1,negative-1]",
                         f"+backend.kwargs.root_parent={tmp_path}", "judge=litellm", "judge.model=openai/unused",
                         "judge.cache_dir=null", f"judge.models={models}", "judge.aggregate=mean"],
                        output_dir=out)
    run_study(spec)
    assert a_state.requests and b_state.requests
    graded = {(g.case_id, g.condition): g for g in read_grades(out / "grades.jsonl")}
    assert len(graded) == 4
    acc = graded[("negative-1", "with_skill")].metrics["accuracy"]
    per = acc.details[PER_JUDGE]
    assert set(per) == {"litellm:openai/judge-a", "litellm:openai/judge-b", "heuristic"}
    assert per["litellm:openai/judge-a"]["score"] == 0.0 and per["litellm:openai/judge-b"]["score"] == 1.0
    scored = [v["score"] for v in per.values() if v["score"] is not None]
    assert acc.score == pytest.approx(sum(scored) / len(scored)) and acc.grader.startswith("mean of ")
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["labels"]["judges"] == ["panel of 3 (mean): litellm:openai/judge-a, litellm:openai/judge-b, "
                                           "heuristic"]
    rows = {r["metric"]: r for r in summary["judge_agreement"]}
    assert {"accuracy", "goal_accuracy", "behavior_check"} <= set(rows)
    accuracy = rows["accuracy"]
    assert accuracy["aggregate"] == "mean" and "litellm:openai/judge-a" in accuracy["judges"]
    pair = next(k for k in accuracy["kappas"]
                if set(k["judges"]) == {"litellm:openai/judge-a", "litellm:openai/judge-b"})
    # A passes only the right total (the with-skill explicit case); B also passes both line-count trials.
    a_pass = [graded[k].metrics["accuracy"].details[PER_JUDGE]["litellm:openai/judge-a"]["score"] >= 0.5
              for k in sorted(graded)]
    b_pass = [graded[k].metrics["accuracy"].details[PER_JUDGE]["litellm:openai/judge-b"]["score"] >= 0.5
              for k in sorted(graded)]
    assert pair["n"] == 4 and pair["kappa"] == pytest.approx(cohen_kappa(a_pass, b_pass)[0])
    assert sum(x != y for x, y in zip(a_pass, b_pass, strict=True)) == 2  # the two known disagreements
    index = (out / "report" / "index.html").read_text()
    assert 'id="judge-agreement"' in index and "ICC(A,1)" in index
