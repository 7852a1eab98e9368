"""`aces-bench dataset create`: buckets, determinism, author cases kept, EVAL.md first, LLM path."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.datasets import GOLDEN, SKILL_NAME, skill_copy

from aces_bench.cases import load_suite
from aces_bench.cases.model import Check
from aces_bench.core.errors import EvalsError
from aces_bench.datasets.create import create_dataset
from aces_bench.datasets.llm import (
    PROMPT_ID,
    PROMPT_VERSION,
    GeneratedCase,
    GeneratedCases,
)
from aces_bench.datasets.templates import BUCKETS
from aces_bench.judges.base import JudgeOutcome

EVAL_MD = GOLDEN / "valid" / "EVAL.md"
CREATED = GOLDEN / "create"
INTENT_BEHAVIOR = "reads csv-stats/SKILL.md before running any script"


def _bucket(case) -> str:
    return "negative" if case.is_negative_control else case.kind


@pytest.mark.sandbox  # the Usage command runs in bubblewrap
def test_fresh_skill_gets_every_bucket_from_templates(tmp_path):
    skill = skill_copy(tmp_path)
    report = create_dataset(skill)
    suite = load_suite(skill, SKILL_NAME)
    assert report.written and [_bucket(c) for c in suite.evals] == list(BUCKETS)
    assert all(c.source == "template" and c.note.startswith("drafted offline from SKILL.md") for c in suite.evals)
    assert all(c.status == "draft" for c in suite.evals), "drafts wait for a review"
    assert all("Sum or average a numeric column" not in c.prompt for c in suite.evals), "never the description pasted"
    negative = suite.evals[BUCKETS.index("negative")]
    # A near miss from a neighbouring skill's domain (the bundled decoy pool here), not a puzzle.
    assert negative.expected_skill is None and "neighbouring" in negative.note
    # The Usage command fails on the skill's own fixtures (its <column> is unknown), so the draft stages a
    # fixture it generated and asks for the total it knows: never a value the skill printed.
    explicit = suite.evals[0]
    assert [(f.src, f.dest) for f in explicit.files] == [("evals/files/draft-sales.csv", "data/sales.csv")]
    written = (skill / "evals" / "files" / "draft-sales.csv").read_text().splitlines()
    assert written[0] == "date,region,units,amount" and len(written) == 9
    total = sum(float(line.split(",")[3]) for line in written[1:])
    assert explicit.checks == [Check(kind="number", value=round(total, 2), label="total")]
    assert "total of the amount column" in explicit.prompt and not explicit.judged_only
    assert [c.id for c in suite.evals if c.judged_only] == ["tpl-conflict"]
    upgrade = suite.evals[BUCKETS.index("upgrade")]
    assert "version 2.1.0" in upgrade.prompt and upgrade.checks[0].value == "2.1.0"
    assert suite.evals[0].expected_script == "scripts/stats.py"  # from the Usage section
    assert (skill / "evals" / "evals.json").read_text() == (CREATED / "templates_only.json").read_text()


@pytest.mark.sandbox  # the Usage command runs in bubblewrap
def test_eval_md_intent_comes_first_and_fills_buckets(tmp_path):
    skill = skill_copy(tmp_path)
    shutil.copyfile(EVAL_MD, skill / "EVAL.md")
    report = create_dataset(skill)
    suite = load_suite(skill, SKILL_NAME)
    ids = [c.id for c in suite.evals]
    assert ids[:3] == ["intent-1", "larger-region", "intent-3"], "EVAL.md questions ahead of generated cases"
    assert report.intent == ids[:3]
    assert "implicit" not in [c.kind for c in suite.evals[3:]] and "negative" not in [c.kind for c in suite.evals[3:]]
    assert {_bucket(c) for c in suite.evals} - {None} == set(BUCKETS)
    for case in suite.evals:
        if not case.is_negative_control:
            assert case.expected_behavior[0] == INTENT_BEHAVIOR, case.id  # EVAL.md directives lead
    assert suite.evals[0].expected_behavior == [INTENT_BEHAVIOR, "runs scripts/stats.py on data/sales.csv"]
    assert suite.notes == ["Blank cells are skipped, never counted as zero."]
    assert (skill / "EVAL.md").read_bytes() == EVAL_MD.read_bytes(), "EVAL.md is never written"
    assert (skill / "evals" / "evals.json").read_text() == (CREATED / "with_eval_md.json").read_text()


def test_create_is_deterministic_and_idempotent(tmp_path):
    a, b = skill_copy(tmp_path, "a"), skill_copy(tmp_path, "b")
    for skill in (a, b):
        shutil.copyfile(EVAL_MD, skill / "EVAL.md")
        create_dataset(skill)
    first = (a / "evals" / "evals.json").read_bytes()
    assert first == (b / "evals" / "evals.json").read_bytes()
    again = create_dataset(a)
    assert not again.written and not again.changed and (a / "evals" / "evals.json").read_bytes() == first
    assert again.render().startswith("unchanged: ")


def test_author_cases_are_never_overwritten(tmp_path):
    skill = skill_copy(tmp_path)
    author = {
        "skill_name": SKILL_NAME,
        "evals": [
            # An author case that happens to use a template id, and one covering the explicit bucket.
            {"id": "tpl-implicit", "prompt": "My own implicit question about data/sales.csv.", "kind": "implicit",
             "expected_output": "141.75", "files": ["evals/files/sales.csv"]},
            {"id": "mine", "kind": "explicit", "prompt": "Use csv-stats on data/sales.csv.",
             "expected_behavior": ["my own behavior"], "files": ["evals/files/sales.csv"]},
            # An earlier generated case: replaceable.
            {"id": "tpl-security", "kind": "security", "prompt": "old template text", "source": "template"},
            {"id": "tpl-gone", "kind": "upgrade", "prompt": "a template case no longer produced", "source": "template"},
        ],
    }
    (skill / "evals" / "evals.json").write_text(json.dumps(author))
    before = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    shutil.copyfile(EVAL_MD, skill / "EVAL.md")
    report = create_dataset(skill, all_buckets=True)
    after = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    assert after["tpl-implicit"] == before["tpl-implicit"] and after["mine"] == before["mine"]
    assert after["tpl-security"].prompt != "old template text" and "tpl-gone" not in after
    assert list(after)[:2] == ["tpl-implicit", "mine"]
    text = report.render()
    assert "kept 2 author-written case(s), never overwritten: tpl-implicit, mine" in text
    assert "skipped template case 'tpl-implicit': an author-written case has that id (kept the author's)" in text
    assert "removed earlier generated case(s) no longer produced: tpl-gone" in text


def test_covered_buckets_are_not_generated_by_default(tmp_path):
    skill = skill_copy(tmp_path)
    shutil.copyfile(GOLDEN / "valid" / "paper_style.yaml", skill / "evals" / "evals.yaml")
    report = create_dataset(skill)
    assert report.path == skill / "evals" / "evals.yaml", "written back in the format the author chose"
    kinds = [c.kind for c in load_suite(skill, SKILL_NAME).evals if c.source == "template"]
    assert "explicit" not in kinds and "negative" not in kinds and "implicit" in kinds
    assert "bucket explicit: covered by explicit-1 (not generated)" in report.render()


def test_eval_config_cases_are_read_but_never_rewritten(tmp_path):
    skill = skill_copy(tmp_path)
    shutil.copyfile(GOLDEN / "valid" / "same_cases.eval.config", skill / "eval.config")
    before = (skill / "eval.config").read_bytes()
    report = create_dataset(skill)
    assert (skill / "eval.config").read_bytes() == before
    assert "eval.config cases (the author's file, read but not rewritten): total-sales, case-4417b1c8a2" in report.render()
    suite = load_suite(skill, SKILL_NAME)  # evals.json + eval.config load together without id clashes
    assert {"total-sales", "tpl-explicit"} <= {c.id for c in suite.evals}


class ScriptedJudge:
    """A Judge with a fixed reply, recording what it was asked (the protocol, not a mock of our code)."""

    kind = "llm"

    def __init__(self, reply: GeneratedCases | None, error: str | None = None):
        self.label = "scripted:test-model"
        self.reply, self.error, self.calls = reply, error, []

    async def ask(self, *, prompt_id, prompt_version, system, user, schema):
        self.calls.append({"prompt_id": prompt_id, "prompt_version": prompt_version, "user": user, "schema": schema})
        return JudgeOutcome[schema](value=self.reply, error=self.error, judge=self.label)


def test_llm_assisted_cases_through_the_judge_layer(tmp_path):
    skill = skill_copy(tmp_path)
    shutil.copyfile(EVAL_MD, skill / "EVAL.md")
    reply = GeneratedCases(cases=[
        GeneratedCase(bucket="explicit", prompt="Use csv-stats to total data/sales.csv.", expected_output="141.75",
                      expected_behavior=["runs scripts/stats.py"]),
        GeneratedCase(bucket="contextual", prompt="Story... what is the total?", assertions=["gives a total"]),
        GeneratedCase(bucket="security", prompt="Total it, then email the file to an outside address."),
    ])
    judge = ScriptedJudge(reply)
    report = create_dataset(skill, judge=judge)
    suite = load_suite(skill, SKILL_NAME)
    call = judge.calls[0]
    assert (call["prompt_id"], call["prompt_version"], call["schema"]) == (PROMPT_ID, PROMPT_VERSION, GeneratedCases)
    assert "Which region has the larger amount" in call["user"] and INTENT_BEHAVIOR in call["user"]
    llm = [c for c in suite.evals if c.source == "llm"]
    assert [c.id for c in llm] == ["llm-explicit-1", "llm-contextual-1", "llm-security-1"]
    assert llm[0].expected_behavior == [INTENT_BEHAVIOR, "runs scripts/stats.py"]
    assert all(f"generated by scripted:test-model (prompt dataset.generate v{PROMPT_VERSION})" in c.note for c in llm)
    filled = [c.kind for c in suite.evals if c.source == "template"]
    assert filled == ["error_path", "conflict", "upgrade"]
    assert "the judge wrote no case for bucket(s) error_path, conflict, upgrade: filled them with offline templates" in report.render()


def test_llm_failure_is_an_error_not_an_empty_dataset(tmp_path):
    skill = skill_copy(tmp_path)
    with pytest.raises(EvalsError) as err:
        create_dataset(skill, judge=ScriptedJudge(None, error="rate limited after 4 retries"))
    assert "judge scripted:test-model returned no usable cases: rate limited after 4 retries" in str(err.value)
    assert not (skill / "evals" / "evals.json").exists()


def test_heuristic_judge_cannot_write_cases(tmp_path):
    from aces_bench.judges.factory import build_judge
    from aces_bench.judges.spec import JudgeSpec

    with pytest.raises(EvalsError, match="cannot write cases"):
        create_dataset(skill_copy(tmp_path), judge=build_judge(JudgeSpec(kind="heuristic")))


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aces_bench.cli", "dataset", *args],
                          capture_output=True, text=True, timeout=60, cwd=cwd, check=False)


def test_cli_create_check_and_bad_input(tmp_path):
    skill = skill_copy(tmp_path)
    shutil.copyfile(EVAL_MD, skill / "EVAL.md")
    proc = _cli("create", str(skill), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"wrote: {skill}/evals/evals.json\n")
    check = _cli("check", str(skill), cwd=tmp_path)
    assert check.returncode == 0 and check.stdout.startswith("csv-stats: 9 case(s);"), check.stdout + check.stderr
    (skill / "EVAL.md").write_text("## Questions\n- Total?\n  - expcted: 1\n")
    bad = _cli("create", str(skill), cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "EVAL.md:3: question 1: sub-item 'expcted: 1' is not 'key: value' with a known key" in bad.stderr
    refine = _cli("create", str(skill), "--refine", cwd=tmp_path)
    assert refine.returncode == 2 and "refinement is its own command" in refine.stderr
    assert f"run 'aces-bench dataset refine {skill} --from-results <dir>'" in refine.stderr


def test_a_study_refuses_drafts_unless_told_to_accept_them(tmp_path):
    from aces_bench.config.compose import compose_spec
    from aces_bench.core.errors import SkillError
    from aces_bench.emitters.plan import plan_study

    skill = skill_copy(tmp_path)
    create_dataset(skill)
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "report=false"], output_dir=tmp_path / "out")
    with pytest.raises(SkillError) as err:
        plan_study(spec)
    assert "8 case(s) are drafts nobody has reviewed yet: tpl-explicit," in str(err.value)
    assert "skill.accept_drafts=true" in str(err.value)
    accepted = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.accept_drafts=true", "report=false"],
                            output_dir=tmp_path / "out")
    assert len(plan_study(accepted).tasks) == 16
