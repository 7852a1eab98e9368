"""Trigger evaluation with the reference agent's router (offline) and description optimisation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aces_bench.core.errors import EvalsError
from aces_bench.datasets.trigger import evaluate_triggers, stratified_split
from aces_bench.stats.inference import wilson_interval

CORPUS = Path(__file__).resolve().parent / "corpus"
ORDERS = CORPUS / "skill-creator" / "orders-total"
DECOYS = Path(__file__).resolve().parents[2] / "aces_bench" / "examples" / "decoys"


def test_wilson_matches_the_closed_form_and_empty_is_undefined():
    low, high = wilson_interval(3, 3)
    assert round(low, 4) == 0.4385 and high == pytest.approx(1.0)
    assert wilson_interval(0, 0) == (None, None)


def test_precision_interval_is_wilson_and_empty_is_undefined(tmp_path):
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([{"query": "total the amount column of the orders export", "should_trigger": True},
                                   {"query": "write a haiku about autumn", "should_trigger": False}]))
    iso = evaluate_triggers(ORDERS, queries_file=queries, runs=1).modes[0]
    value, (low, high) = iso.recall()
    assert value == 1.0 and round(low, 4) == 0.2065 and high == pytest.approx(1.0)  # Wilson of 1/1
    only_negative = tmp_path / "neg.json"
    only_negative.write_text(json.dumps([{"query": "write a haiku about autumn", "should_trigger": False}]))
    assert evaluate_triggers(ORDERS, queries_file=only_negative, runs=1).modes[0].recall() == (None, None)


def test_trigger_set_in_isolation_and_group(tmp_path):
    report = evaluate_triggers(ORDERS, decoys=[DECOYS], runs=5)
    assert report.runs == 1 and "deterministic" in report.notes[0]
    iso, group = report.modes
    assert (iso.mode, group.mode) == ("isolation", "group")
    assert len(group.skills) == 1 + len(list(DECOYS.glob("*/SKILL.md")))
    assert iso.counts() == {"tp": 3, "fn": 0, "fp": 0, "tn": 3}
    assert group.confusion()["(none)"]["orders-total"] == 0
    data = report.to_json()
    assert [q["trigger_rate"] for q in data["modes"][0]["queries"]] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]


def test_confusion_names_the_decoy_that_fired(tmp_path):
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([
        {"query": "total the amount column of the orders export", "should_trigger": True},
        {"query": "triage these application logs and find the errors", "should_trigger": False},
    ]))
    report = evaluate_triggers(ORDERS, queries_file=queries, decoys=[DECOYS], runs=1)
    group = report.modes[1]
    fired = group.confusion()["(none)"]
    assert fired["log-triage"] == 1, group.confusion()
    assert report.modes[0].counts()["tn"] == 1  # in isolation nothing else could fire


def test_optimisation_chooses_on_held_out_queries(tmp_path):
    skill = tmp_path / "orders-total"
    shutil.copytree(ORDERS, skill)
    md = (skill / "SKILL.md").read_text().replace(
        "description: Total the amount column of an orders CSV export and count the orders per status. "
        "Use for order exports from the shop backend.", "description: Handles spreadsheets.")
    (skill / "SKILL.md").write_text(md)
    (skill / "evals" / "trigger-evals.json").write_text(json.dumps(
        [{"query": f"sum the amount column of the {w} purchase ledger", "should_trigger": True}
         for w in ("march", "april", "may", "june")]
        + [{"query": q, "should_trigger": False} for q in
           ("write a haiku about autumn", "translate this letter to German", "plan a trip to Rome",
            "what is the boiling point of water")]))
    report = evaluate_triggers(skill, optimise_description=True, seed=1)
    current = report.candidates[0]
    assert current.origin == "current" and report.modes[0].counts()["fn"] == 4
    assert all(c.origin == "deterministic offline proposer" for c in report.candidates[1:])
    assert report.chosen is not current and report.chosen.test > current.test
    assert report.split == (4, 4)  # 40% of each four, rounded: two held out of each kind


def test_split_is_stratified_and_seeded():
    from aces_bench.datasets.trigger import TriggerQuery

    qs = [TriggerQuery(query=f"q{i}", should_trigger=i % 2 == 0) for i in range(10)]
    train, test = stratified_split(qs, 0.4, seed=3)
    assert sum(q.should_trigger for q in test) == 2 and len(test) == 4
    assert stratified_split(qs, 0.4, seed=3) == (train, test)


def test_no_queries_is_a_clear_error():
    with pytest.raises(EvalsError, match="no trigger queries"):
        evaluate_triggers(CORPUS / "paper" / "word-tally")


def test_trigger_file_in_the_evals_object_form_with_prompt_spelling(tmp_path):
    # A skill-creator fork's "Format B": {"evals": [{"prompt", "should_trigger"}]}.
    path = tmp_path / "trigger.json"
    path.write_text(json.dumps({"evals": [{"prompt": "total the orders export", "should_trigger": True},
                                          {"prompt": "write a fibonacci function", "should_trigger": False}]}))
    from aces_bench.datasets.trigger import TriggerQuery, read_trigger_file

    assert read_trigger_file(path) == [TriggerQuery(query="total the orders export", should_trigger=True),
                                       TriggerQuery(query="write a fibonacci function", should_trigger=False)]
    path.write_text(json.dumps([{"prompt": "a", "query": "b", "should_trigger": True}]))
    with pytest.raises(EvalsError, match=r"\[0\].*either 'query' or 'prompt'"):
        read_trigger_file(path)


def test_missing_queries_file_is_a_clear_error(tmp_path):
    with pytest.raises(EvalsError, match="no such file"):
        evaluate_triggers(ORDERS, queries_file=tmp_path / "absent.json")


# --- expected_skill per query: a confusion matrix over every visible skill (issue 27, point 8) ---------------

def test_a_query_meant_for_a_decoy_is_a_row_of_its_own(tmp_path):
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([
        {"query": "total the amount column of the orders export", "expected_skill": "orders-total"},
        {"query": "triage these application logs and find the errors", "expected_skill": "log-triage"},
        {"query": "plan the next release and its changelog", "expected_skill": "release-planner",
         "should_trigger": False},
        {"query": "write a haiku about autumn", "expected_skill": None},
    ]))
    report = evaluate_triggers(ORDERS, queries_file=queries, decoys=[DECOYS], runs=1)
    iso, group = report.modes
    confusion = group.confusion()
    assert list(confusion) == ["orders-total", "log-triage", "release-planner", "(none)"]
    assert confusion["log-triage"]["log-triage"] == 1 and confusion["log-triage"]["orders-total"] == 0
    assert group.counts() == {"tp": 1, "fn": 0, "fp": 0, "tn": 3}  # for the target, a decoy's query is a negative
    value, _, right, decided = group.routing()
    assert decided == 4 and right == sum(confusion[k][k] for k in confusion)
    # In isolation the decoys are not there: their queries are right to fire nothing.
    assert list(iso.confusion()) == ["orders-total", "(none)"] and iso.confusion()["(none)"]["(none)"] == 3
    data = report.to_json()["modes"][1]
    assert [q["expected_skill"] for q in data["queries"]] == ["orders-total", "log-triage", "release-planner",
                                                              "(none)"]
    assert data["routing_accuracy"] == value
    text = report.render()
    assert "meant for log-triage" in text and "routing (the skill meant fired" in text


def test_expected_skill_and_should_trigger_must_agree(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"query": "total the orders", "expected_skill": "log-triage", "should_trigger": True}]))
    with pytest.raises(EvalsError, match=r"\[0\]: should_trigger is true but expected_skill is 'log-triage' "
                                         r"\(the target is 'orders-total'\)"):
        evaluate_triggers(ORDERS, queries_file=bad, runs=1)
    neither = tmp_path / "neither.json"
    neither.write_text(json.dumps([{"query": "total the orders"}]))
    with pytest.raises(EvalsError, match="give should_trigger .* or expected_skill"):
        evaluate_triggers(ORDERS, queries_file=neither, runs=1)


PUBLIC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "public-skills" / "anthropics__skills"


@pytest.mark.shared
@pytest.mark.skipif(not PUBLIC.is_dir(), reason="../shared public skills are absent")
def test_confusion_over_real_public_skills(tmp_path):
    """Five of Anthropic's public skills staged together, queries meant for each and for none: the matrix has
    one row per visible skill meant and one for none, its columns every visible skill."""
    names = ["slack-gif-creator", "algorithmic-art", "mcp-builder", "webapp-testing", "internal-comms"]
    target = tmp_path / names[0]
    shutil.copytree(PUBLIC / names[0], target)
    decoys = tmp_path / "decoys"
    for n in names[1:]:
        shutil.copytree(PUBLIC / n, decoys / n)
    queries = tmp_path / "q.json"
    queries.write_text(json.dumps([
        {"query": "make me a GIF of a cat dancing for Slack", "expected_skill": "slack-gif-creator"},
        {"query": "create generative art with a flow field in p5.js", "expected_skill": "algorithmic-art"},
        {"query": "build an MCP server that wraps the GitHub API", "expected_skill": "mcp-builder"},
        {"query": "test my local web app with Playwright and take a screenshot", "expected_skill": "webapp-testing"},
        {"query": "write this week's status report for leadership", "expected_skill": "internal-comms"},
        {"query": "what is the boiling point of water at sea level", "expected_skill": None},
    ]))
    report = evaluate_triggers(target, queries_file=queries, decoys=[decoys], runs=1)
    group = report.modes[1]
    assert set(group.confusion()) == {*names, "(none)"}
    assert set(group.confusion_columns()) == {*names, "(none)"}
    value, _, right, decided = group.routing()
    assert decided == 6 and value == right / 6
    print(f"\nrouting over 5 public skills (reference router): {right}/6\n" + report.render())
