"""Trial progress: plain log lines when not on a terminal, failures counted and named;
on a terminal one live display that nests Harbor's own progress bar."""

from __future__ import annotations

import asyncio
import io
import re

from rich.console import Console
from rich.progress import Progress
from support.studies import (
    SLOW_SKILL,
    needs_bwrap,
    read_table,
    run_cli,
    study_overrides,
)

from aces_bench.run.progress import TrialProgress

ANSI = re.compile(r"\x1b\[")
# The console prints aces-bench's own lines as plain sentences (aces_bench/study/console.py).
TRIAL_LINE = re.compile(
    r"^(?P<trial>\S+): (?P<what>ok|FAILED \w+) "
    r"\((?P<done>\d+)/(?P<total>\d+) done, (?P<running>\d+) running, (?P<failed>\d+) failed, ETA (?P<eta>\d+s|\?)\)$"
)


@needs_bwrap
def test_plain_progress_lines_count_and_name_failed_trials(tmp_path):
    """The skill's script outlives the agent timeout: that trial fails (AgentTimeoutError)
    and is counted and reported, while the baseline trial of the pair succeeds."""
    out = tmp_path / "out"
    proc = run_cli(f"hydra.run.dir={out}", "workspace.agent_timeout_sec=0.8",
                   *study_overrides(skill=SLOW_SKILL, root_parent=tmp_path))
    text = proc.stdout + proc.stderr
    # A study with a failed trial exits 1 and says how many and why (after its report).
    assert proc.returncode == 1, text
    assert "error: 1 of 2 trial(s) failed (timeout 1): AgentTimeoutError" in proc.stderr
    log_lines = [ln for ln in text.splitlines() if TRIAL_LINE.search(ln) or ln.startswith("trials: ")]
    assert log_lines[0] == "trials: 2 in this job, 0 already done, 2 to run"
    assert not any(ANSI.search(ln) for ln in log_lines), "log lines must be plain text off a terminal"

    trial_lines = [m for m in map(TRIAL_LINE.search, log_lines) if m]
    assert len(trial_lines) == 2, log_lines
    assert [m["done"] for m in trial_lines] == ["1", "2"]
    assert all(m["total"] == "2" for m in trial_lines)
    assert all(m["eta"] != "?" for m in trial_lines)  # an estimate once a trial has finished
    failed = [m for m in trial_lines if m["what"] != "ok"]
    assert [m["what"] for m in failed] == ["FAILED AgentTimeoutError"]
    assert ".isolation" in failed[0]["trial"]
    last = trial_lines[-1]
    assert (last["running"], last["failed"]) == ("0", "1")

    # The same log goes to the run's log file.
    assert "1 failed" in (out / "cli.log").read_text()

    # The failed trial is a row of the table, with its cause, not a silent 0 or a gap.
    table = read_table(out).set_index("condition")
    assert table.loc["with_skill", "status"] == "timeout"
    assert table.loc["with_skill", "failure_cause"].startswith("AgentTimeoutError")
    assert table.loc["baseline", "status"] == "ok"


class _Event:
    """The two fields of Harbor's TrialHookEvent that the progress display reads."""

    def __init__(self, name: str, failed: bool = False):
        from types import SimpleNamespace

        self.trial_name = name
        info = SimpleNamespace(exception_type="VerifierTimeoutError") if failed else None
        self.result = SimpleNamespace(exception_info=info)


def test_terminal_display_nests_harbors_progress_bar():
    """On a terminal our live display and Harbor's own bar share one console: the
    first live draws both as one region instead of two displays overwriting a line."""
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=150, color_system=None)
    progress = TrialProgress(3, already_done=1, console=console)

    async def run() -> None:
        with progress, Progress(console=console) as harbor_bar:
            harbor_bar.add_task("Running trials...", total=3, completed=1)
            assert console._live_stack[0] is progress._live  # ours is the outer display
            await progress.on_start(_Event("a"))
            await progress.on_start(_Event("b"))
            await progress.on_end(_Event("a", failed=True))
            await progress.on_end(_Event("b"))

    asyncio.run(run())
    frames = buffer.getvalue()
    assert "3/3 done, 0 running, 1 failed, ETA 0s" in frames
    assert "Running trials..." in frames
    assert progress.summary() == "3/3 done, 0 running, 1 failed, ETA 0s"


def test_default_console_is_the_one_harbor_draws_on():
    from rich import get_console

    assert TrialProgress(1)._console is get_console()


def test_inside_one_line_a_job_prints_one_line_off_a_terminal(caplog):
    """Sequential rounds and sweep members: one line per job, not one per 5% of its trials
    (a failure is still named on its own line)."""
    import logging

    from aces_bench.run.progress import one_line

    console = Console(file=io.StringIO(), force_terminal=False)
    with caplog.at_level(logging.INFO, logger="aces_bench.run"), one_line("sequential round 2"):
        with TrialProgress(40, console=console) as progress:
            for i in range(40):
                asyncio.run(progress.on_start(_Event(f"t{i}")))
                asyncio.run(progress.on_end(_Event(f"t{i}", failed=i == 7)))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("t7: FAILED VerifierTimeoutError")
    assert re.fullmatch(r"sequential round 2: trials: 40 in this job, 0 already done, 40 to run; 40/40 done, "
                        r"0 running, 1 failed in \d+s", lines[1]), lines[1]
    # Outside the scope the same job logs its start line and a line per 5% of its trials.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="aces_bench.run"), TrialProgress(40, console=console) as progress:
        for i in range(40):
            asyncio.run(progress.on_start(_Event(f"t{i}")))
            asyncio.run(progress.on_end(_Event(f"t{i}")))
    assert len(caplog.records) == 1 + 20


def test_on_a_terminal_the_one_line_is_labelled():
    from aces_bench.run.progress import one_line

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    with one_line("sweep member 3"), TrialProgress(2, console=console) as progress:
        asyncio.run(progress.on_start(_Event("a")))
        asyncio.run(progress.on_end(_Event("a")))
    assert "sweep member 3" in buffer.getvalue() and "1/2 done" in buffer.getvalue()
