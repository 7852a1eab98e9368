"""Dimensions, composite weights, outcome-only view and the three grading modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from aces_bench.config.spec import GradingSpec
from aces_bench.core.errors import ConfigError
from aces_bench.core.metrics import dimensions, metric_names
from aces_bench.graders.dimensions import dimension_scores, outcome_only, weighted_composite
from aces_bench.graders.modes import MODES, author_aggregate, check_author_graders, decide
from aces_bench.graders.outcome import trial_outcome
from aces_bench.records.results import MetricResult


def m(name: str, score: float | None, subs: dict | None = None, **details) -> MetricResult:
    return MetricResult(metric=name, score=score, sub_scores=subs or {}, grader="t", details=details,
                        unscored_reason=None if score is not None else "because")


METRICS_FULL = {
    "security": m("security", 1.0),
    "skill_execution": m("skill_execution", 0.5, {"activation": 1.0, "execution": 0.0, "workflow_order": None,
                                                  "error_recovery": 0.5}),
    "skill_efficiency": m("skill_efficiency", 0.75, {"routing": 0.5, "tool_efficiency": 1.0}),
    "accuracy": m("accuracy", 0.8),
    "goal_accuracy": m("goal_accuracy", None),
    "behavior_check": m("behavior_check", 1.0),
}


def test_every_metric_feeds_a_dimension_and_the_mapping_is_data():
    used = {s.metric for srcs in dimensions().values() for s in srcs}
    assert used == set(metric_names())
    assert list(dimensions()) == ["Security", "Correctness", "Discoverability", "Effectiveness", "Efficiency"]


def test_dimensions_average_scored_sources_only():
    d = dimension_scores(METRICS_FULL)
    assert d == {
        "Security": 1.0,
        "Correctness": 0.8,  # goal_accuracy unscored: left out, not 0
        "Discoverability": 0.75,  # activation 1.0, routing 0.5
        "Effectiveness": 0.5,  # execution 0, error_recovery 0.5, behavior 1.0 (workflow n/a)
        "Efficiency": 1.0,
    }
    assert dimension_scores({})["Security"] is None


def test_outcome_only_is_the_mean_of_scored_outcome_metrics():
    assert outcome_only(METRICS_FULL) == 0.8
    assert outcome_only({**METRICS_FULL, "goal_accuracy": m("goal_accuracy", 0.4)}) == 0.6
    assert outcome_only({"security": m("security", 1.0)}) is None


def test_composite_default_equal_weights_and_configured_weights():
    equal = GradingSpec(mode="aces_default")
    assert equal.weight_of("security") == pytest.approx(1 / 6)
    scored = [1.0, 0.5, 0.75, 0.8, 1.0]
    assert weighted_composite(METRICS_FULL, equal.metrics, equal.weight_of) == pytest.approx(sum(scored) / 5)
    weighted = GradingSpec(mode="aces_default", weights={"security": 3.0, "accuracy": 1.0})
    assert weighted_composite(METRICS_FULL, weighted.metrics, weighted.weight_of) == pytest.approx((3 + 0.8) / 4)
    assert weighted_composite({}, equal.metrics, equal.weight_of) is None


def _decided(spec: GradingSpec, metrics, reward, status="ok"):
    """Composite (graders/modes.decide) and outcome/pass (the mode's one decision) of a trial."""
    v = decide(spec, metrics)
    o = trial_outcome(status=status, reward=reward, verifier_checks=True, metrics=metrics, grading_mode=spec.mode,
                      pass_threshold=spec.pass_threshold, author_score=v.author_score, author_pass=v.author_pass)
    return v, o


def test_modes_decide_composite_and_pass():
    author = {"author:a": m("author:a", 0.9, passed=True), "author:b": m("author:b", 0.5)}
    metrics = {**METRICS_FULL, **author}
    default, d = _decided(GradingSpec(mode="aces_default"), metrics, reward=0.4)
    plus, p = _decided(GradingSpec(mode="aces_plus_custom"), metrics, reward=0.4)
    custom, c = _decided(GradingSpec(mode="custom_only", pass_threshold=0.5), metrics, reward=0.4)
    assert default.composite == plus.composite == pytest.approx(4.05 / 5)
    assert default.author_score is None and d.final_pass is False
    assert plus.author_score == 0.7 and p.final_pass is False  # reward still decides pass
    assert custom.composite == custom.author_score == 0.7
    # custom_only: the author graders decide the outcome (the headline, pass@k, McNemar) as well as pass.
    assert c.final_pass is True and c.outcome == 0.7 and c.source == "author"  # a: passed; b: 0.5 >= 0.5
    _, strict = _decided(GradingSpec(mode="custom_only", pass_threshold=0.6), metrics, reward=1.0)
    assert strict.final_pass is False and strict.outcome == 0.7
    _, none = _decided(GradingSpec(mode="aces_default"), METRICS_FULL, reward=None)
    assert none.final_pass is None and none.outcome is None
    # A failure of the arm is a failure in every mode; infrastructure is excluded in every mode.
    for mode in MODES:
        assert _decided(GradingSpec(mode=mode), metrics, reward=None, status="timeout")[1].final_pass is False
        assert _decided(GradingSpec(mode=mode), metrics, reward=None, status="timeout")[1].outcome == 0.0
        assert _decided(GradingSpec(mode=mode), metrics, reward=1.0, status="infra_error")[1].final_pass is None


def test_one_unscored_author_grader_leaves_the_contract_unscored():
    author = {"author:a": m("author:a", 1.0), "author:b": m("author:b", None)}
    assert author_aggregate(author, 0.5) == (None, None, "author grader author:b unscored: because")
    v, o = _decided(GradingSpec(mode="custom_only"), {**METRICS_FULL, **author}, reward=1.0)
    assert v.composite is None and o.final_pass is None and o.outcome is None
    assert v.note == "custom_only: author grader author:b unscored: because"
    none = decide(GradingSpec(mode="custom_only"), METRICS_FULL)
    assert none.composite is None and none.note == "custom_only: the skill has no author graders"


def test_every_grading_mode_has_its_hydra_option_and_back():
    # Adding a mode is one GradingMode in aces_bench/core/modes.py and its option file.
    conf = Path(__file__).resolve().parents[2] / "conf" / "grading"
    assert {p.stem for p in conf.glob("*.yaml")} == set(MODES)


def test_modes_needing_author_graders_refuse_skills_without_them(tmp_path):
    with_graders = tmp_path / "a"
    (with_graders / "evals" / "graders").mkdir(parents=True)
    (with_graders / "evals" / "graders" / "g.py").write_text("print(1)")
    without = tmp_path / "b"
    without.mkdir()
    check_author_graders("aces_default", {"b": without})
    check_author_graders("aces_plus_custom", {"a": with_graders, "b": without})
    with pytest.raises(ConfigError) as err:
        check_author_graders("custom_only", {"a": with_graders, "b": without})
    assert "grading.mode=custom_only but skill(s) b have no author graders" in str(err.value)
    assert "evals/graders/<name>.py" in str(err.value)
    with pytest.raises(ConfigError):
        check_author_graders("aces_plus_custom", {"b": without})
