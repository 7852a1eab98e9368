"""``aces-bench trigger`` through Harbor: real trigger trials on the local backend.

The reference agent (offline default) and Harbor's terminus-2 driven by the scripted
loopback model server run one trial per query and run, in isolation and in a group
workspace with the paper's decoys; what fired is read from each trajectory with the
graders' activation rule. The queries are a skill-creator trigger eval set
(``corpus/skill-creator/eval_set.json``: a list of ``{"query", "should_trigger"}``, with
the near-miss and casual spelling its authors recommend).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.model_server import ModelServer, Request, say

from aces_bench.datasets.trigger import NONE
from aces_bench.datasets.trigger_run import evaluate_with_harness

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

ORDERS = HERE / "corpus" / "skill-creator" / "orders-total"
EVAL_SET = HERE / "corpus" / "skill-creator" / "eval_set.json"
QUERIES = [q["query"] for q in json.loads(EVAL_SET.read_text())]
SUM, CASUAL, NGINX, LETTER = QUERIES



def _local(tmp_path: Path) -> list[str]:
    return [f"+backend.kwargs.root_parent={tmp_path}"]


def _by_query(mode) -> dict:
    return {q.query: q for q in mode.queries}


@pytest.mark.sandbox
def test_reference_agent_trigger_trials_in_isolation_and_group(tmp_path):
    out = tmp_path / "trigger"
    report = evaluate_with_harness(ORDERS, _local(tmp_path), out=out, queries_file=EVAL_SET, runs=2)
    assert report.method == "harness" and "reference agent" in report.router and "through Harbor" in report.router
    iso, group = report.modes
    assert (iso.mode, group.mode) == ("isolation", "group")
    assert group.skills == ["api-debugger", "config-validator", "log-triage", "orders-total", "release-planner"]
    for mode in (iso, group):
        # N runs x queries trials, each one a real Harbor trial dir, none dropped.
        assert mode.totals() == {"runs": 8, "decided": 8, "failed": 0}
        assert len(list((out / mode.mode / "jobs").glob("*/*__*/result.json"))) == 8
        q = _by_query(mode)
        assert q[SUM].fired == {"orders-total": 2} and q[CASUAL].fired == {"orders-total": 2}
        assert q[LETTER].fired == {NONE: 2}
    assert _by_query(iso)[NGINX].fired == {NONE: 2}
    # Across the group the near miss fires the log-triage decoy: the confusion matrix says so.
    assert group.confusion() == {"orders-total": {"orders-total": 4}, NONE: {NONE: 2, "log-triage": 2}}
    assert group.counts() == {"tp": 4, "fn": 0, "fp": 0, "tn": 4}
    precision, (low, high) = group.precision()
    assert precision == 1.0 and round(low, 3) == 0.510 and high == pytest.approx(1.0)  # Wilson of 4/4
    assert any("deterministic" in n for n in report.notes)  # its repeated runs say what they are worth
    # The trial stopped at the activation: SKILL.md read, the skill's script never ran.
    traj = json.loads(next((out / "isolation" / "jobs").glob("*/*q01*/agent/trajectory.json")).read_text())
    commands = [tc["arguments"]["command"] for s in traj["steps"] for tc in (s.get("tool_calls") or [])]
    assert any("orders-total/SKILL.md" in c and c.startswith("cat ") for c in commands)
    assert not any("total.py" in c for c in commands)
    data = json.loads((out / "trigger.json").read_text()) if (out / "trigger.json").exists() else report.to_json()
    assert data["modes"][1]["confusion"][NONE]["log-triage"] == 2


@pytest.mark.sandbox
def test_failed_and_timed_out_trials_are_counted_not_scored(tmp_path):
    report = evaluate_with_harness(ORDERS, [*_local(tmp_path), "workspace.agent_timeout_sec=0.001"],
                                   out=tmp_path / "t", queries_file=EVAL_SET, runs=1, modes=("isolation",))
    (iso,) = report.modes
    assert iso.totals() == {"runs": 4, "decided": 0, "failed": 4}
    assert all(q.failures and "timeout" in q.failures[0].lower() for q in iso.queries), iso.queries[0].failures
    assert iso.precision() == (None, None) and iso.recall() == (None, None)
    assert iso.confusion()[NONE] == {"(failed)": 2}
    assert "4 of 4 trial(s) failed or timed out" in report.render()
    assert report.to_json()["modes"][0]["queries"][0]["trigger_rate"] is None


_SKILL = re.compile(r"<skill>\s*<name>([^<]+)</name>\s*<description>([^<]*)</description>\s*"
                    r"<location>([^<]+)</location>", re.S)
_WORD = re.compile(r"[a-z]{5,}")


def _trigger_model(request: Request) -> object:
    """A scripted stand-in for a model deciding whether a listed skill fits the task.

    It activates (cats the SKILL.md at its listed location) the skill whose description
    shares the most words of five letters or more (two at least) with the task, else answers at once.
    """
    first = request.user_texts[0]
    task = first.split("Task Description:", 1)[-1].split("---", 1)[0].lower()
    words = set(_WORD.findall(task))
    scored = sorted(((len(words & set(_WORD.findall(desc.lower()))), name, loc)
                     for name, desc, loc in _SKILL.findall(first)), reverse=True)
    turn = sum(1 for m in request.body.get("messages", []) if m.get("role") == "assistant")

    def reply(analysis, commands, complete):
        return say(json.dumps({"analysis": analysis, "plan": analysis,
                               "commands": [{"keystrokes": c + "\n", "duration": 0.1} for c in commands],
                               "task_complete": complete}))

    if turn == 0 and scored and scored[0][0] >= 2:
        return reply(f"The {scored[0][1]} skill fits; read it.", [f"cat {scored[0][2]}"], False)
    if turn == 0:
        return reply("No listed skill fits; answer directly.", ["echo 'answered' > /workspace/answer.txt"], True)
    return reply("Done.", [], True)


@pytest.mark.sandbox
def test_terminus2_trigger_trials_against_the_scripted_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")  # litellm wants some key even for a keyless server
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": SUM, "should_trigger": True}, {"query": NGINX, "should_trigger": False}]))
    with ModelServer(_trigger_model, max_requests=80, idle_timeout=120) as server:
        report = evaluate_with_harness(
            ORDERS, ["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
                     f"model.base_url={server.base_url}", *_local(tmp_path)],
            out=tmp_path / "t2", queries_file=queries, runs=1, max_turns=2)
    assert "terminus-2" in report.router and "openai/test-model" in report.router
    assert "max_turns=2" in report.notes[0]
    iso, group = report.modes
    for mode in (iso, group):
        assert mode.totals() == {"runs": 2, "decided": 2, "failed": 0}
        assert _by_query(mode)[SUM].fired == {"orders-total": 1}, (mode.mode, _by_query(mode)[SUM].failures)
    # The unrelated ask answers without a skill alone, and fires the competing decoy in the group.
    assert _by_query(iso)[NGINX].fired == {NONE: 1} and _by_query(group)[NGINX].fired == {"log-triage": 1}
    # max_turns=2 held: no conversation went past two model turns.
    assert max(sum(1 for m in r.body.get("messages", []) if m.get("role") == "assistant")
               for r in server.requests) <= 1


ORDERS_DESCRIPTION = ("Total the amount column of an orders CSV export and count the orders per status. "
                      "Use for order exports from the shop backend.")


def _proposing_model(request: Request) -> object:
    """The trigger model above, and as proposer (the optimisation's system prompt) one fixed proposal."""
    if "You improve the description" in request.system:
        return say(json.dumps({"descriptions": [ORDERS_DESCRIPTION]}))
    return _trigger_model(request)


@pytest.mark.sandbox
def test_description_optimisation_scores_candidates_with_terminus2_trials(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    skill = tmp_path / "orders-total"
    __import__("shutil").copytree(ORDERS, skill)
    md = skill / "SKILL.md"
    md.write_text(md.read_text().replace(f"description: {ORDERS_DESCRIPTION}", "description: Handles spreadsheets."))
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": q, "should_trigger": i < 2} for i, q in enumerate(QUERIES)]))
    out = tmp_path / "opt"
    with ModelServer(_proposing_model, max_requests=120, idle_timeout=120) as server:
        report = evaluate_with_harness(
            skill, ["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
                    f"model.base_url={server.base_url}", *_local(tmp_path)],
            out=out, queries_file=queries, runs=1, modes=("isolation",), max_turns=2, optimise_description=True,
            test_share=0.5, seed=0)
    assert report.modes[0].counts() == {"tp": 0, "fn": 2, "fp": 0, "tn": 2}  # the weak description misses
    assert report.split == (2, 2)
    assert "trigger trials of terminus-2" in report.scored_by
    current, proposed = report.candidates
    assert current.origin == "current" and proposed.origin == "proposed by litellm:openai/test-model"
    assert (current.test, proposed.test) == (0.5, 1.0) and report.chosen is proposed
    # The proposer saw the train query the current description really missed in its trials.
    (ask,) = [r for r in server.requests if "You improve the description" in r.system]
    train_positive = next(q for q in QUERIES[:2] if q in ask.user_texts[0])
    assert train_positive
    # Each candidate's scores come from real trials of a copy carrying its description.
    staged = list((out / "candidates").glob("*/orders-total/SKILL.md"))
    assert any("Handles spreadsheets." in p.read_text() for p in staged)
    assert any(ORDERS_DESCRIPTION in p.read_text() for p in staged)
    # 2 candidates x (2 train + 2 test) trials: the current's train runs, its test runs, the proposal's in one batch.
    assert sorted(len(list(d.glob("jobs/*/*__*/result.json"))) for d in (out / "optimise").iterdir()) == [2, 2, 4]


@pytest.mark.sandbox
def test_cli_writes_json_and_an_html_fragment(tmp_path, capsys):
    from aces_bench.datasets.trigger_cli import main

    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": SUM, "should_trigger": True}, {"query": LETTER, "should_trigger": False}]))
    out = tmp_path / "cli"
    assert main([str(ORDERS), "--queries", str(queries), "--runs", "1", "--modes", "isolation", "--out", str(out),
                 *_local(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "decided by: reference agent (deterministic, non-LLM) through Harbor (backend local)" in printed
    data = json.loads((out / "trigger.json").read_text())
    assert data["method"] == "harness" and data["modes"][0]["runs"] == 2 and data["modes"][0]["failed"] == 0
    assert [q["fired"] for q in data["modes"][0]["queries"]] == [{"orders-total": 1}, {NONE: 1}]
    prov = json.loads((out / "isolation" / "provenance.json").read_text())
    assert [(s["name"], s["role"]) for s in prov["skills"]] == [("orders-total", "target")]
    assert prov["spec"]["harness"]["kwargs"]["trigger_only"] is True and prov["spec"]["study"]["n_attempts"] == 1
    html = (out / "trigger.html").read_text()
    assert html.startswith('<section class="aces-trigger">') and "<html" not in html
    assert "precision 1.00 [0.21, 1.00]" in html and "trigger-confusion" in html


def _claude_code_cli():
    from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir

    cli = CLIS["claude-code"]
    return pytest.mark.skipif(not (cli_dir(cli) / MANIFEST).is_file(),
                              reason=f"{cli.package}@{cli.version} is not in the agent cache: "
                                     "run `aces-bench agents install claude-code`")


def _claude_code_model() -> object:
    """claude-code's "model": call the Skill tool for a listed skill the ask is about, else answer in text."""
    from support.model_server import Replay, call

    def offered(r: Request, name: str) -> bool:
        return any(f'"{name}"' in chunk or f"- {name}:" in chunk
                   for chunk in (r.system, *r.user_texts, str(r.body.get("tools", ""))))

    def choose(r: Request):
        # The task is the user text with the instruction footer (others carry the harness's reminders).
        text = next((t for t in r.user_texts if "Working directory:" in t), "")
        ask = text.split("\n\n---\nWorking directory:", 1)[0].rsplit("</system-reminder>", 1)[-1].lower()
        for skill, word in (("orders-total", "orders"), ("log-triage", "triage")):
            if word in ask and offered(r, skill):
                return [call("Skill", skill=skill)]
        return []
    return Replay(choose, final="Here is my answer.")


@pytest.mark.sandbox
@_claude_code_cli()
def test_claude_code_trigger_trials_read_its_skill_tool(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": SUM, "should_trigger": True}, {"query": NGINX, "should_trigger": False}]))
    with ModelServer(_claude_code_model(), max_requests=60) as server:
        report = evaluate_with_harness(
            ORDERS, ["harness=claude-code", "model=openai-compatible", "model.name=anthropic/claude-sonnet-4-5",
                     f"model.base_url={server.url}", "model.api_key_env=ANTHROPIC_API_KEY", *_local(tmp_path)],
            out=tmp_path / "cc", queries_file=queries, runs=1)
    assert server.errors == [] and "claude-code" in report.router and "max_turns=3" in report.notes[0]
    iso, group = report.modes
    for mode in (iso, group):
        assert _by_query(mode)[SUM].fired == {"orders-total": 1}, (mode.mode, _by_query(mode)[SUM].failures)
    assert _by_query(iso)[NGINX].fired == {NONE: 1} and _by_query(group)[NGINX].fired == {"log-triage": 1}
