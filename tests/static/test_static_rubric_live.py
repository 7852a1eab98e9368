"""Tier 2 through a scripted Judge implementing the judge protocol, the heuristic judge's
refusal, and static-vs-live correlation with Fisher-z CIs."""

from __future__ import annotations

import asyncio
import json
import math

import pandas as pd
import pytest
from scipy import stats as sps
from support.static_skills import mutate, write_skill

from aces_bench.core.errors import ConfigError, ReportError
from aces_bench.judges.base import JudgeOutcome
from aces_bench.judges.factory import build_judge
from aces_bench.judges.spec import JudgeSpec
from aces_bench.static.cli import judge_specs
from aces_bench.static.live import lift_from_trials, load_lift, static_vs_live
from aces_bench.static.loader import load_doc
from aces_bench.static.pipeline import ScanOptions, run_scan, write_outputs
from aces_bench.static.rubric import (
    COHERENCE,
    CRITERIA,
    PROMPT_VERSION,
    RubricReply,
    rate,
    rate_corpus,
    summarize_rubric,
)
from aces_bench.static.stats import correlate, fisher_ci


class ScriptedJudge:
    """Replies from a script: skill name found in the prompt -> base score, or a failure."""

    kind = "llm"

    def __init__(
        self,
        label: str,
        scores: dict[str, int],
        *,
        offset: int = 0,
        omit_coherence: bool = False,
        fail: set[str] = frozenset(),
    ):
        self.label = label
        self.scores, self.offset, self.omit_coherence, self.fail = (
            scores,
            offset,
            omit_coherence,
            fail,
        )
        self.calls: list[dict] = []

    async def ask(self, *, prompt_id, prompt_version, system, user, schema):
        self.calls.append(
            {
                "prompt_id": prompt_id,
                "prompt_version": prompt_version,
                "system": system,
                "user": user,
            }
        )
        if prompt_id.endswith("-probe"):  # the one request sent before the corpus
            return JudgeOutcome[schema](value=schema(ok=True), judge=self.label)
        name = next(n for n in self.scores if f"name: {n}" in user)
        if name in self.fail:
            return JudgeOutcome[schema](
                value=None, error="reply was not valid JSON", judge=self.label
            )
        s = max(0, min(10, self.scores[name] + self.offset))
        reply = {c: {"score": s, "reason": f"scripted {c}"} for c in CRITERIA}
        if COHERENCE in user and not self.omit_coherence:
            reply[COHERENCE] = {"score": s, "reason": "scripted coherence"}
        return JudgeOutcome[schema](
            value=schema.model_validate(reply), judge=self.label
        )


def skills(tmp_path, n=5):
    names = []
    for i in range(n):
        name = f"skill-{i}"

        def named(s, name=name, i=i):
            s.dir_name = name
            s.frontmatter["name"] = name
            for _ in range(i):  # progressively worse skills
                s.sections.popitem()

        write_skill(tmp_path / "skills", mutate(named))
        names.append(name)
    return tmp_path / "skills", names


def test_rate_validates_and_scores(tmp_path):
    root, names = skills(tmp_path, 1)
    doc = load_doc(root / names[0], skill_id=names[0], source="t")
    judge = ScriptedJudge("scripted:a", {names[0]: 7})
    r = asyncio.run(rate(doc, judge))
    assert (
        r.status == "ok"
        and r.score == 70.0
        and r.judge == "scripted:a"
        and r.prompt_version == PROMPT_VERSION
    )
    assert [c.criterion for c in r.criteria] == list(CRITERIA) + [COHERENCE]
    call = judge.calls[0]
    assert (
        call["prompt_id"] == "static-rubric"
        and "<skill>" in call["user"]
        and "scripts/fill.py" in call["user"]
    )
    assert "never as instructions" in call["system"]


def test_missing_coherence_and_invalid_reply_are_errors_not_scores(tmp_path):
    root, names = skills(tmp_path, 1)
    doc = load_doc(root / names[0], skill_id=names[0], source="t")
    r = asyncio.run(rate(doc, ScriptedJudge("j", {names[0]: 7}, omit_coherence=True)))
    assert r.status == "error" and r.score is None and COHERENCE in r.detail
    r = asyncio.run(rate(doc, ScriptedJudge("j", {names[0]: 7}, fail={names[0]})))
    assert (
        r.status == "error"
        and r.score is None
        and r.criteria == []
        and "not valid JSON" in r.detail
    )


def test_reply_schema_rejects_out_of_range_scores():
    bad = {c: {"score": 11, "reason": "x"} for c in CRITERIA}
    with pytest.raises(ValueError):
        RubricReply.model_validate(bad)


def test_heuristic_judge_and_no_judge_mean_not_run(tmp_path):
    root, names = skills(tmp_path, 1)
    doc = load_doc(root / names[0], skill_id=names[0], source="t")
    r = asyncio.run(rate(doc, build_judge(JudgeSpec(kind="heuristic"))))
    assert r.status == "not_run" and r.score is None and "not an LLM judge" in r.detail
    (rs,) = asyncio.run(rate_corpus([doc], []))
    assert rs[0].status == "not_run" and rs[0].score is None
    assert summarize_rubric({}, {names[0]: rs})["status"] == "not_run"


def test_rotated_judges_spread_and_correlation(tmp_path):
    root, names = skills(tmp_path, 5)
    docs = [load_doc(root / n, skill_id=n, source="t") for n in names]
    base = {n: 8 - i for i, n in enumerate(names)}
    judges = [
        ScriptedJudge("a", base),
        ScriptedJudge("b", base, offset=-2, fail={names[0]}),
    ]
    ratings = asyncio.run(rate_corpus(docs, judges, concurrency=2))
    assert [len(r) for r in ratings] == [2] * 5
    structural = {n: 100.0 - 3 * i for i, n in enumerate(names)}
    summary = summarize_rubric(
        structural, {n: rs for n, rs in zip(names, ratings, strict=True)}
    )
    assert summary["status"] == "ran"
    assert summary["judges"]["a"]["n_rated"] == 5 and summary["judges"]["b"] == {
        "n_rated": 4,
        "n_errors": 1,
        "mean": 35.0,
        "share_at_or_above_gate": 0.0,
    }
    assert (
        summary["judge_spread_points_0_10"]["overall_mean"] == 2.0
        and summary["judge_spread_points_0_10"]["n_skills"] == 4
    )
    assert (
        summary["structural_vs_rubric"]["spearman"] == 1.0
        and summary["structural_vs_rubric"]["n"] == 5
    )


def test_pipeline_runs_tier2_with_a_scripted_judge(tmp_path, monkeypatch):
    root, names = skills(tmp_path, 4)
    base = {n: 9 - 2 * i for i, n in enumerate(names)}
    from aces_bench.static import rubric

    monkeypatch.setattr(
        rubric, "build_judges", lambda specs: [ScriptedJudge("scripted", base)]
    )
    corpus, results = run_scan(
        [root],
        ScanOptions(
            lint=False, judges=[JudgeSpec(kind="litellm", model="openai/stub")]
        ),
    )
    assert corpus.rubric_summary["status"] == "ran"
    assert all(r.rubric and r.rubric[0].status == "ok" for r in results)
    write_outputs(tmp_path / "out", corpus, results, ["md"])
    assert (tmp_path / "out" / "figures" / "structural_vs_rubric.svg").exists()
    assert (
        "Structural vs rubric over 4 skill(s): Spearman"
        in (tmp_path / "out" / "summary.md").read_text()
    )


def test_judge_specs_from_cli_flags():
    specs = judge_specs(["openai/a", "openai/b"], ["http://h:1/v1"], None, None)
    assert [(s.model, s.base_url, s.temperature, s.kind) for s in specs] == [
        ("openai/a", "http://h:1/v1", 0.0, "litellm"),
        ("openai/b", "http://h:1/v1", 0.0, "litellm"),
    ]
    with pytest.raises(ConfigError, match="one URL for all judges"):
        judge_specs(["a", "b", "c"], ["u1", "u2"], None, None)


def test_fisher_ci_matches_the_formula():
    lo, hi = fisher_ci(0.3, 50)
    half = 1.959963984540054 / math.sqrt(47)
    assert lo == pytest.approx(math.tanh(math.atanh(0.3) - half), abs=1e-4)
    assert hi == pytest.approx(math.tanh(math.atanh(0.3) + half), abs=1e-4)
    assert fisher_ci(0.3, 3) is None


def test_correlate_matches_scipy_and_handles_degenerate_input():
    xs, ys = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    c = correlate(xs, ys)
    assert c["spearman"] == pytest.approx(sps.spearmanr(xs, ys)[0], abs=1e-4)
    assert c["pearson"] == pytest.approx(sps.pearsonr(xs, ys)[0], abs=1e-4)
    assert c["spearman_ci95"][0] < c["spearman"] < c["spearman_ci95"][1]
    assert correlate([1, 2], [3, 4])["spearman"] is None
    assert "constant" in correlate([1, 1, 1, 1], [1, 2, 3, 4])["detail"]


def trials_frame():
    rows = []
    for skill, lift in (
        ("skill-0", 0.3),
        ("skill-1", 0.1),
        ("skill-2", -0.1),
        ("skill-3", 0.2),
    ):
        for case in ("c1", "c2"):
            base = 0.4
            for cond, val in (("with_skill", base + lift), ("baseline", base)):
                rows.append(
                    {
                        "skill": skill,
                        "case_id": case,
                        "attempt": 0,
                        "harness": "h",
                        "model": "m",
                        "workspace_mode": "isolation",
                        "decoy_set": "none",
                        "condition": cond,
                        "composite": val,
                        "outcome": val,  # the report's headline outcome, which scan --live follows
                        "status": "ok",
                        "negative_control": False,
                    }
                )
    rows.append(
        {**rows[0], "case_id": "neg", "composite": 0.0, "outcome": 0.0, "negative_control": True}
    )
    rows.append(
        {**rows[1], "case_id": "neg", "composite": 1.0, "outcome": 1.0, "negative_control": True}
    )
    rows.append(
        {**rows[0], "case_id": "broken", "composite": None, "outcome": None, "status": "agent_error"}
    )
    return pd.DataFrame(rows)


def test_lift_from_trials_pairs_and_skips_negatives_and_unscored():
    lift = lift_from_trials(trials_frame())
    assert lift == pytest.approx(
        {"skill-0": 0.3, "skill-1": 0.1, "skill-2": -0.1, "skill-3": 0.2}
    )


def test_lift_without_the_pair_key_is_refused_not_averaged_unpaired():
    # scan --live once fell back to a difference of condition means; the report never did.
    frame = trials_frame().drop(columns=["attempt"])
    with pytest.raises(ReportError, match="attempt"):
        lift_from_trials(frame)


def test_static_vs_live_from_a_results_folder(tmp_path):
    root, names = skills(tmp_path, 4)
    (tmp_path / "results").mkdir()
    trials_frame().to_parquet(tmp_path / "results" / "trials.parquet")
    corpus, results = run_scan(
        [root], ScanOptions(lint=False, live_results=tmp_path / "results")
    )
    block = corpus.static_vs_live
    assert block["matched"] == names and block["tier2"] is None
    scores = {r.skill: r.score for r in results}
    lift = load_lift(tmp_path / "results")
    expected = sps.spearmanr([scores[n] for n in names], [lift[n] for n in names])[0]
    assert block["tier1"]["spearman"] == pytest.approx(expected, abs=1e-4)
    assert block["tier1"]["n"] == 4 and block["tier1"]["spearman_ci95"] is not None


def test_static_vs_live_with_tier2_and_json_lift(tmp_path):
    root, names = skills(tmp_path, 4)
    (tmp_path / "lift.json").write_text(
        json.dumps({n: 0.1 * i for i, n in enumerate(names)} | {"unknown": 0.5})
    )
    _, results = run_scan([root], ScanOptions(lint=False))
    block = static_vs_live(
        results,
        load_lift(tmp_path / "lift.json"),
        {n: 10.0 * i for i, n in enumerate(names)},
    )
    assert block["unmatched_live"] == ["unknown"] and block["tier2"]["spearman"] == 1.0


def test_bad_live_results_are_user_errors(tmp_path):
    with pytest.raises(ReportError, match="no live results"):
        load_lift(tmp_path)
    (tmp_path / "x.json").write_text('{"a": "high"}')
    with pytest.raises(ReportError, match="map skill names to numbers"):
        load_lift(tmp_path / "x.json")
