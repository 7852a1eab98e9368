"""The quiet console: library chatter filtered, aces-bench's lines plain, the verdict table at the end."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from support.studies import FIXTURE_SKILL, needs_bwrap, run_cli

from aces_bench.cli import SUBCOMMANDS
from aces_bench.study import console


def _record(name: str, level: int, message: str = "m") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, (), None)


def test_libraries_speak_only_from_warning_up(monkeypatch):
    monkeypatch.setattr(console.STATE, "verbose", False)
    keep = console.QuietFilter().filter
    assert keep(_record("aces_bench.run", logging.INFO))
    assert not keep(_record("aces_bench.backends.copyout", logging.INFO))  # the log file keeps it
    assert not keep(_record("harbor.utils.logger.harbor.trial.trial.x", logging.DEBUG))
    assert not keep(_record("LiteLLM", logging.INFO))
    assert keep(_record("harbor.environments.base", logging.WARNING))
    assert keep(_record("asyncio", logging.ERROR))
    monkeypatch.setattr(console.STATE, "verbose", True)
    assert keep(_record("harbor.utils.logger.harbor.trial.trial.x", logging.DEBUG))


def test_console_format(monkeypatch):
    monkeypatch.setattr(console.STATE, "verbose", False)
    fmt = console.ConsoleFormatter()
    assert fmt.format(_record("aces_bench.run", logging.INFO, "trials: 2 to run")) == "trials: 2 to run"
    assert fmt.format(_record("harbor.x", logging.WARNING, "careful")) == "warning: harbor.x: careful"


def test_verbose_flag_is_taken_off_the_command_line(monkeypatch):
    monkeypatch.setattr(console.STATE, "verbose", False)
    assert console.strip_verbose(["-v", "study=demo", "--verbose"]) == ["study=demo"]
    assert console.STATE.verbose is True


def test_help_lists_every_subcommand_then_the_groups_and_the_composed_config():
    # aces-bench writes the study app's help itself (Hydra's copies its repository per group).
    proc = run_cli("--help")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    lines = out.splitlines()
    for name, (_, desc) in SUBCOMMANDS.items():
        assert f"  {name:<9} {desc}" in lines, name
    assert out.index("Subcommands") < out.index("== Configuration groups ==") < out.index("== Config ==")
    groups = dict(line.split(": ", 1) for line in lines if line.startswith(("harness: ", "study: ", "hydra/launcher: ")))
    assert {"reference", "claude-code", "codex"} <= set(groups["harness"].split(", "))
    assert "base_harness" not in groups["harness"]  # a schema, not an option
    assert {"demo", "aces_paper"} <= set(groups["study"].split(", "))
    assert "slurm" in groups["hydra/launcher"]
    assert "  name: demo" in lines  # the composed config, as the overrides given compose it


def test_help_composes_the_overrides_it_is_given_and_names_a_bad_key():
    proc = run_cli("study=aces_paper", "--help")
    assert proc.returncode == 0, proc.stderr
    assert "  name: aces_paper" in proc.stdout.splitlines()
    bad = run_cli("--help", "study.nme=x")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("error: study.nme: unknown key"), bad.stderr


def test_help_into_a_reader_that_stops_early_is_not_a_traceback():
    import shlex
    import subprocess

    from support.studies import ROOT, cli_argv, cli_env

    proc = subprocess.run(f"{shlex.join(cli_argv('--help'))} | head -1", shell=True, cwd=ROOT, env=cli_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.startswith("usage: aces-bench"), proc.stdout
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


def test_failed_trials_make_the_command_exit_1_saying_how_many_and_why(monkeypatch, capsys):
    import pandas as pd

    monkeypatch.setattr(console, "STATE", console.ConsoleState())
    assert console.exit_status() == 0
    console.count_failures(pd.DataFrame({
        "status": ["ok", "timeout", "setup_error", "not_run", "skipped"],
        "failure_cause": [None, "AgentTimeoutError: too slow", "setup: the harness did not list the target skill x",
                          "not run: the study stopped at study.max_cost_usd", None]}))
    assert console.exit_status() == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 2 of 5 trial(s) failed (timeout 1, setup_error 1): AgentTimeoutError: too slow")


@needs_bwrap
def test_a_successful_study_ends_with_the_verdict_table_and_nothing_else_loud(tmp_path):
    out = tmp_path / "out"
    skill = tmp_path / "skill"
    shutil.copytree(FIXTURE_SKILL, skill)
    proc = run_cli("skill=custom", f"skill.paths=[{skill}]", "skill.cases=[explicit-1]", f"hydra.run.dir={out}",
                   f"+backend.kwargs.root_parent={tmp_path}", timeout=300)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0, text
    assert "Traceback" not in text and "DEBUG" not in text and "[harbor" not in text
    lines = proc.stdout.splitlines()
    table = lines[lines.index("") + 1:]
    assert table[0].split() == ["skill", "outcome", "lift", "[95%", "CI]", "verdict", "failed", "excluded", "cost"]
    assert table[1].split()[:2] == ["csv-column-sum", "+1.00"]
    assert table[-1] == f"report: {out / 'report' / 'index.html'}"
    rows = console.verdict_table(out)
    assert rows[1:] == table[1:len(rows)]
    # One case cannot reach a verdict: the console says why and the fix, between the table and the report path.
    assert table[len(rows)].startswith("no verdict for csv-column-sum: too few cases: 1 of 1 cases won")
    assert table[len(rows) + 1].startswith("  fix: add positive cases") and len(table) == len(rows) + 3


def test_no_report_no_table(tmp_path):
    assert console.verdict_table(Path(tmp_path)) == []


@pytest.fixture(autouse=True)
def _fresh_state(monkeypatch):
    monkeypatch.setattr(console, "STATE", console.ConsoleState())
