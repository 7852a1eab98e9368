"""`dataset create` with a model: the generator prompt asks for checks, the reply is schema-validated
(malformed replies refused with a one-line error), and the cases it writes are decidable. The model is
the project's scripted loopback server, reached through the real litellm judge."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.datasets import SKILL_NAME, skill_copy
from support.model_server import ModelServer, Request, say

from aces_bench.cases import load_suite
from aces_bench.datasets.llm import SYSTEM

TOTAL = 169.8  # the generated fixture's amount total (aces_bench/datasets/fixtures.py)


def _generator(cases: list[dict]):
    def script(request: Request):
        assert "deterministic check" in request.system  # the generator prompt, v3
        payload = json.loads(request.user_texts[-1].split("\n\nSKILL.md body:")[0])
        assert payload["generated_fixture"]["amount_total"] == TOTAL
        assert payload["generated_fixture"]["path"] == "data/sales.csv"
        return say(json.dumps({"cases": cases}))
    return script


def _create(skill, server: ModelServer, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aces_bench.cli", "dataset", "create", str(skill), "--judge-model", "openai/test-model",
         "--judge-base-url", server.base_url, "--judge-api-key-env", "ACES_TEST_KEY", *extra],
        capture_output=True, text=True, timeout=300,
        env={**__import__("os").environ, "ACES_TEST_KEY": "sk-test", "LITELLM_LOCAL_MODEL_COST_MAP": "True"})


def test_the_generator_prompt_asks_for_checks_any_correct_answer_passes():
    assert "must hold for ANY correct answer" in SYSTEM and "never from running the skill" in SYSTEM


@pytest.mark.sandbox  # grounding runs the skill's --help in bubblewrap
def test_a_model_writes_cases_with_checks_through_the_loopback_server(tmp_path):
    skill = skill_copy(tmp_path)
    cases = [
        {"bucket": "explicit", "prompt": "Use csv-stats: what is the total of the amount column in data/sales.csv?",
         "expected_behavior": ["runs scripts/stats.py"],
         "checks": [{"kind": "number", "value": TOTAL, "label": "total"}]},
        {"bucket": "implicit", "prompt": "My data/sales.csv: add up the amount column and save it to out/total.txt.",
         "checks": [{"kind": "regex", "value": "\\S", "file": "out/total.txt"}]},
        {"bucket": "contextual", "prompt": "How should I think about seasonality in sales?", "assertions": ["is clear"]},
    ]
    with ModelServer(_generator(cases), max_requests=5) as server:
        done = _create(skill, server, "--dry-run")
        assert done.returncode == 0, done.stderr
        done = _create(skill, server)
    assert done.returncode == 0, done.stderr
    suite = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    explicit, implicit, contextual = suite["llm-explicit-1"], suite["llm-implicit-1"], suite["llm-contextual-1"]
    assert explicit.checks[0].value == TOTAL and explicit.expected_script == "scripts/stats.py"
    assert [(f.src, f.dest) for f in explicit.files] == [("evals/files/draft-sales.csv", "data/sales.csv")]
    assert implicit.checks[0].file == "out/total.txt" and not implicit.judged_only
    assert contextual.judged_only and contextual.files == []  # no check, no named fixture: said so
    assert all(c.status == "draft" and c.source == "llm" for c in suite.values() if c.id.startswith("llm-"))
    assert (skill / "evals" / "files" / "draft-sales.csv").is_file()


@pytest.mark.sandbox
@pytest.mark.parametrize(("case", "message"), [
    ({"bucket": "explicit", "prompt": "x", "checks": [{"kind": "number", "value": "about ten"}]},
     "a 'number' check needs a numeric value, got 'about ten'"),
    ({"bucket": "explicit", "prompt": "x", "checks": [{"kind": "regex", "value": "(unclosed"}]},
     "regex does not compile"),
    ({"bucket": "explicit", "prompt": "x", "checks": [{"kind": "checksum", "value": "1"}]}, "returned no usable cases"),
])
def test_a_malformed_reply_is_refused_with_one_line(tmp_path, case, message):
    skill = skill_copy(tmp_path)
    with ModelServer(lambda r: say(json.dumps({"cases": [case]})), max_requests=10) as server:
        done = _create(skill, server)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert message in done.stderr and done.stderr.startswith("error: ")
    assert not (skill / "evals" / "evals.json").exists()


def _judge_reply(request: Request) -> str | None:
    """The judge's side of the conversation: every judged question answered yes (the checks decide the reward)."""
    system = request.system
    yes = {"answer": "yes", "reason": "the trajectory shows it"}
    if "Answer each of these four questions" in system:
        return json.dumps({k: yes for k in ("action_correct", "facts_consistent", "task_addressed", "actionable")})
    if "state the user_goal" in system:
        return json.dumps({"user_goal": "the total of the amount column", "end_state": "a total was reported"})
    if "You compare a desired outcome" in system:
        return json.dumps({"achieved": "yes", "reason": "same result"})
    if "Decide whether the agent showed the one expected behavior" in system:
        return json.dumps(yes)
    return None


@pytest.mark.sandbox
def test_generator_agent_and_judge_on_one_loopback_server(tmp_path, monkeypatch):
    """Issue 36 end to end: the model drafts a case with a check, terminus-2 runs it with and without the skill,
    the litellm judge grades; the check (a total the draft's own fixture fixes) decides the reward."""
    import shutil as sh

    from support.studies import FIXTURE_SKILL, read_table, study_overrides
    from support.terminus_policy import terminus_policy

    from aces_bench.config.compose import compose_spec
    from aces_bench.study.entry import run_study

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    monkeypatch.setenv("ACES_TEST_KEY", "sk-test-dummy")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    monkeypatch.setenv("HARBOR_TELEMETRY", "0")
    skill = tmp_path / "csv-column-sum"
    sh.copytree(FIXTURE_SKILL, skill)
    sh.rmtree(skill / "evals")  # a skill with no cases gets drafts
    generated = [{"bucket": "explicit",
                  "prompt": "Use the csv-column-sum skill to sum the amount column of data/sales.csv.",
                  "expected_behavior": ["runs scripts/colsum.py"],
                  "checks": [{"kind": "number", "value": TOTAL, "label": "total"}]}]
    seen: list[str] = []

    def script(request: Request):
        if "deterministic check" in request.system:
            seen.append("generator")
            return say(json.dumps({"cases": generated}))
        judged = _judge_reply(request)
        if judged is not None:
            seen.append("judge")
            return say(judged)
        seen.append("agent")
        return terminus_policy(request)

    with ModelServer(script, max_requests=60, idle_timeout=120) as server:
        done = subprocess.run(
            [sys.executable, "-m", "aces_bench.cli", "dataset", "create", str(skill), "--judge-model",
             "openai/test-model", "--judge-base-url", server.base_url, "--judge-api-key-env", "ACES_TEST_KEY"],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        out = tmp_path / "out"
        spec = compose_spec(
            ["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
             f"model.base_url={server.base_url}", "judge=litellm", "judge.model=openai/test-model",
             f"judge.base_url={server.base_url}", f"judge.cache_dir={tmp_path / 'judge-cache'}",
             *study_overrides(skill=skill, cases=("llm-explicit-1",), root_parent=tmp_path,
                              extra=("skill.accept_drafts=true",))],
            output_dir=out)
        run_study(spec)
    assert server.errors == []
    assert {"generator", "agent", "judge"} <= set(seen), seen
    table = read_table(out).set_index("condition")
    assert (table["status"] == "ok").all(), table[["status", "failure_cause"]].to_dict()
    assert table.loc["with_skill", "reward"] == 1.0  # total=169.80 from the skill's script on the draft's fixture
    assert table.loc["baseline", "reward"] == 0.0  # the baseline writes a line count
    assert table["case_unreviewed"].all()
    assert table["judge_label"].str.contains("openai/test-model").all()
