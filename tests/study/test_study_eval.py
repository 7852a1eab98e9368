"""``aces-bench eval PATH``: one command from a skill folder to a verdict, or to why there is none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.studies import needs_bwrap, run_cli

from aces_bench.cli import SUBCOMMANDS, _usage, main, unknown_command
from aces_bench.core.errors import AcesError
from aces_bench.datasets.evaluate import parse_eval_args, prepare_eval

SKILL_MD = """---
name: word-count
description: Count the words in a text file and report the total, using the bundled counter script.
---
# Word count

## When to use
- "How many words are in this file?"

## Usage
```bash
python3 scripts/count.py <file>
```
"""


def write_skill(root: Path, *, judged_cases: int = 0) -> Path:
    """A small skill; with ``judged_cases`` its cases carry only judged text assertions (the issue's situation)."""
    skill = root / "word-count"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD)
    (skill / "scripts" / "count.py").write_text("import sys\nprint(f'words: {len(open(sys.argv[1]).read().split())}')\n")
    if judged_cases:
        (skill / "evals" / "files").mkdir(parents=True)
        evals = []
        for i in range(judged_cases):
            (skill / "evals" / "files" / f"t{i}.txt").write_text("alpha beta " * (i + 3))
            evals.append({"id": f"c{i}", "kind": "explicit", "files": [f"evals/files/t{i}.txt"],
                          "prompt": f"Use the word-count skill to count the words in data/t{i}.txt",
                          "assertions": ["The answer states the word count"]})
        (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "word-count", "evals": evals}))
    return skill


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_eval_is_listed_first():
    assert next(iter(SUBCOMMANDS)) == "eval"
    assert _usage().splitlines()[0].startswith("usage: aces-bench eval PATH")


def test_a_typo_gets_did_you_mean_and_a_folder_gets_eval(tmp_path, capsys, monkeypatch):
    error = unknown_command("scna")
    assert error is not None and "did you mean 'scan'?" in str(error)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-skill").mkdir()
    assert "aces-bench eval my-skill" in str(unknown_command("my-skill"))
    for word in ("harness=codex", "+x=1", "-m", "--cfg", "run", "~study.x"):
        assert unknown_command(word) is None, word
    assert main(["scna"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: aces-bench: unknown command 'scna'") and "Traceback" not in err


def test_paths_then_overrides(tmp_path):
    skill = write_skill(tmp_path, judged_cases=2)
    args = parse_eval_args([str(skill), "harness=codex", "study.n_attempts=3", "-m", "--cfg", "job"])
    assert args.paths == [skill] and args.overrides == ["harness=codex", "study.n_attempts=3"]
    assert args.flags == ["-m", "--cfg", "job"]
    with pytest.raises(AcesError, match="no such folder"):
        parse_eval_args([str(tmp_path / "nope")])
    with pytest.raises(AcesError, match="set by eval"):
        parse_eval_args([str(skill), "skill.paths=[/x]"])
    plan = prepare_eval([str(skill), "harness=codex"])
    assert plan.argv[:2] == ["skill=custom", f"skill.paths=['{skill.resolve()}']"]
    assert "study.name=eval-word-count" in plan.argv and plan.argv[-1] == "harness=codex"
    assert not plan.drafted and "skill.accept_drafts=true" not in plan.argv


def test_a_skill_without_cases_gets_drafts_outside_its_folder(tmp_path):
    skill = write_skill(tmp_path / "src")
    before = _tree(skill)
    out = tmp_path / "out"
    plan = prepare_eval([str(skill), f"hydra.run.dir={out}"])
    assert _tree(skill) == before  # the author's folder is left as it was
    copy = out / "drafts" / "word-count"
    assert (copy / "evals" / "evals.json").is_file() and plan.drafted["word-count"] > 0
    assert f"skill.paths=['{copy.resolve()}']" in plan.argv and "skill.accept_drafts=true" in plan.argv
    assert any("unreviewed drafted case" in line and str(copy / "evals" / "evals.json") in line
               for line in plan.closing)
    written = prepare_eval([str(skill), f"hydra.run.dir={out}", "--write-drafts"])
    assert (skill / "evals" / "evals.json").is_file() and f"skill.paths=['{skill.resolve()}']" in written.argv


def test_a_hostile_skill_folder_cannot_hang_or_leak_through_the_drafts_copy(tmp_path):
    """A skill that plants a FIFO (a plain copy would block reading it) or a link to a host file
    (a plain copy would copy it) gets a one-line error from eval, and nothing is read from them."""
    import os

    from aces_bench.core.errors import SkillError

    skill = write_skill(tmp_path / "src")
    os.mkfifo(skill / "scripts" / "pipe")
    with pytest.raises(SkillError, match="pipe"):
        prepare_eval([str(skill), f"hydra.run.dir={tmp_path / 'out'}"])
    (skill / "scripts" / "pipe").unlink()
    (skill / "scripts" / "secrets").symlink_to("/etc/passwd")
    with pytest.raises(SkillError, match="outside the skill folder"):
        prepare_eval([str(skill), f"hydra.run.dir={tmp_path / 'out2'}"])
    assert not (tmp_path / "out2" / "drafts" / "word-count" / "scripts" / "secrets").exists()


def test_a_plugin_is_evaluated_as_a_plugin(tmp_path):
    plugin = tmp_path / "my-plugin"
    write_skill(plugin / "skills", judged_cases=1)
    (plugin / ".claude-plugin").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "my-plugin"}')
    plan = prepare_eval([str(plugin)])
    assert "skill.intervention=plugin" in plan.argv and "study.name=eval-my-plugin" in plan.argv
    with pytest.raises(AcesError, match="plugins and skill folders"):
        prepare_eval([str(plugin), str(plugin / "skills" / "word-count")])


@needs_bwrap
def test_judged_only_cases_end_in_no_verdict_explained_and_exit_3(tmp_path):
    """The issue's run: cases with only judged assertions, the offline heuristic judge abstains.
    Before, 'no data' and exit 0; now one sentence with counts, the fix, and exit 3."""
    skill = write_skill(tmp_path / "src", judged_cases=3)
    out = tmp_path / "out"
    proc = run_cli("eval", str(skill), f"hydra.run.dir={out}", f"+backend.kwargs.root_parent={tmp_path}",
                   timeout=400)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 3, text
    assert "Traceback" not in text
    assert ("no verdict for word-count: no decidable check: 6 of 6 trials undecided because the cases carry only "
            "judged assertions and the offline heuristic judge abstains") in proc.stdout
    assert "judge=litellm judge.model=" in proc.stdout and "word-count/evals/evals.json" in proc.stdout
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert [(n["skill"], n["cause"], n["n_affected"]) for n in summary["no_verdict"]] == [
        ("word-count", "no decidable check", 6)]
    html = (out / "report" / "index.html").read_text()
    # Right under the verdict table, ahead of the long headline account: on the first screen.
    assert html.index('id="verdict-table"') < html.index('id="no-verdict"') < html.index('id="headline-sentence"')
    assert "no decidable check: 6 of 6 trials" in html.split('id="headline-sentence"')[0]


@needs_bwrap
def test_eval_on_a_bare_skill_drafts_runs_and_ends_with_the_verdict_table(tmp_path):
    skill = write_skill(tmp_path / "src")
    before = _tree(skill)
    out = tmp_path / "out"
    proc = run_cli("eval", str(skill), f"hydra.run.dir={out}", f"+backend.kwargs.root_parent={tmp_path}",
                   timeout=400)
    text = proc.stdout + proc.stderr
    assert proc.returncode in (0, 3), text  # a verdict, or none said why with exit 3; never a silent 0 without one
    assert "Traceback" not in text and _tree(skill) == before
    assert "drafted case(s)" in proc.stderr and "unreviewed drafted case(s)" in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[lines.index("") + 1].split()[:1] == ["skill"] and lines[lines.index("") + 2].startswith("word-count")
    if proc.returncode == 3:
        assert "no verdict for word-count:" in proc.stdout and "  fix: " in proc.stdout
